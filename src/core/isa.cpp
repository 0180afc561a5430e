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

void ResetIsa() { Active().store(DetectedIsa(), std::memory_order_relaxed); }

const char* IsaName(Isa isa) { return isa == Isa::kAvx512 ? "avx512" : "avx2"; }

void SetExactQ8(bool exact) { ExactQ8Flag().store(exact, std::memory_order_relaxed); }

bool ExactQ8() { return ExactQ8Flag().load(std::memory_order_relaxed); }

}  // namespace lineage::kernels
