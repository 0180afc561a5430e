// Instruction-set selection for the fast kernels.
//
// The binary is built for AVX2+FMA+F16C; AVX-512 kernels (F, BW, VL, BF16,
// VNNI) are compiled per function and used when the CPU reports all of them.
// ActiveIsa() is what every kernel dispatches on. ForceIsa() lets tests and
// benchmarks pin a path; it is not meant to be called while kernels run on
// other threads (a relaxed atomic, read once per kernel call).
#pragma once

#include <string_view>

namespace lineage::kernels {

enum class Isa { kAvx2, kAvx512 };

// The best ISA this CPU supports (detected once).
Isa DetectedIsa();

// The ISA the kernels use now: DetectedIsa() unless forced.
Isa ActiveIsa();

// Forces `isa`; returns false (and changes nothing) if the CPU lacks it.
bool ForceIsa(Isa isa);

// Back to DetectedIsa() (and AvxVnni() to what the CPU has).
void ResetIsa();

// AVX-VNNI (vpdpbusd on 256-bit registers), which Intel cores from Alder
// Lake on have without AVX-512: the AVX2 integer tiles use it where the CPU
// has it. ForceAvxVnni(false) makes them use plain AVX2 instructions (tests
// and benchmarks); ForceAvxVnni(true) returns false (and changes nothing)
// if the CPU lacks it. The same threading rule as ForceIsa().
bool AvxVnni();
bool ForceAvxVnni(bool on);

const char* IsaName(Isa isa);

// Pins the kernels by name, for benchmarks and the `--isa` option: "auto"
// (what the CPU has), "avx512", "avx2" (with AVX-VNNI where the CPU has
// it) or "avx2-novnni". False (nothing changed) if the name is unknown or
// the CPU lacks it.
bool ForceIsaByName(std::string_view name);
inline constexpr const char* kIsaNames = "auto, avx512, avx2, avx2-novnni";

// Activation mode of the block types with integer kernels (Q8_0, Q4_0,
// Q4_K, Q5_K, Q6_K, IQ4_XS; the name is historical). Off (the default),
// their weights use integer dot products: the activations are quantised to
// int8 per block of 32 (Q8_0, Q4_0) or 256 (the super-block types), as GGML does
// (fast, not exact). On, they take the path of every other block type:
// decoded to fp32 and multiplied with fp32 activations, the exact product of
// the stored weights (what the llama.cpp-oracle tests compare against).
// Process-wide, with ForceIsa's threading rule.
void SetExactQ8(bool exact);
bool ExactQ8();

}  // namespace lineage::kernels

// Marks a function as compiled for the AVX-512 subset the fast kernels use.
// Only call such functions when ActiveIsa() == Isa::kAvx512.
#define LINEAGE_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx512vnni")))
