// Instruction-set selection for the fast kernels.
//
// The binary is built for AVX2+FMA+F16C; AVX-512 kernels (F, BW, VL, BF16,
// VNNI) are compiled per function and used when the CPU reports all of them.
// ActiveIsa() is what every kernel dispatches on. ForceIsa() lets tests and
// benchmarks pin a path; it is not meant to be called while kernels run on
// other threads (a relaxed atomic, read once per kernel call).
#pragma once

namespace lineage::kernels {

enum class Isa { kAvx2, kAvx512 };

// The best ISA this CPU supports (detected once).
Isa DetectedIsa();

// The ISA the kernels use now: DetectedIsa() unless forced.
Isa ActiveIsa();

// Forces `isa`; returns false (and changes nothing) if the CPU lacks it.
bool ForceIsa(Isa isa);

// Back to DetectedIsa().
void ResetIsa();

const char* IsaName(Isa isa);

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
