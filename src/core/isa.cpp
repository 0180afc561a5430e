#include "core/isa.h"

#include <atomic>

namespace lineage::kernels {
namespace {

Isa Detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni"))
    return Isa::kAvx512;
  return Isa::kAvx2;
}

std::atomic<Isa>& Active() {
  static std::atomic<Isa> active{DetectedIsa()};
  return active;
}

bool DetectAvxVnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avxvnni");
}

std::atomic<bool>& AvxVnniFlag() {
  static std::atomic<bool> on{DetectAvxVnni()};
  return on;
}

std::atomic<bool>& ExactQ8Flag() {
  static std::atomic<bool> exact{false};
  return exact;
}

}  // namespace

Isa DetectedIsa() {
  static const Isa detected = Detect();
  return detected;
}

Isa ActiveIsa() { return Active().load(std::memory_order_relaxed); }

bool ForceIsa(Isa isa) {
  if (isa == Isa::kAvx512 && DetectedIsa() != Isa::kAvx512) return false;
  Active().store(isa, std::memory_order_relaxed);
  return true;
}

void ResetIsa() {
  Active().store(DetectedIsa(), std::memory_order_relaxed);
  AvxVnniFlag().store(DetectAvxVnni(), std::memory_order_relaxed);
}

bool AvxVnni() { return AvxVnniFlag().load(std::memory_order_relaxed); }

bool ForceAvxVnni(bool on) {
  if (on && !DetectAvxVnni()) return false;
  AvxVnniFlag().store(on, std::memory_order_relaxed);
  return true;
}

bool ForceIsaByName(std::string_view name) {
  if (name == "auto") {
    ResetIsa();
    return true;
  }
  if (name == "avx512") return ForceIsa(Isa::kAvx512) && ForceAvxVnni(DetectAvxVnni());
  if (name == "avx2") return ForceIsa(Isa::kAvx2) && ForceAvxVnni(DetectAvxVnni());
  if (name == "avx2-novnni") return ForceIsa(Isa::kAvx2) && ForceAvxVnni(false);
  return false;
}

const char* IsaName(Isa isa) { return isa == Isa::kAvx512 ? "avx512" : "avx2"; }

void SetExactQ8(bool exact) { ExactQ8Flag().store(exact, std::memory_order_relaxed); }

bool ExactQ8() { return ExactQ8Flag().load(std::memory_order_relaxed); }

}  // namespace lineage::kernels
