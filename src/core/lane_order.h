// Lane order: Q4_K and Q6_K blocks with their codes moved, at load, so that
// the AVX-512 row kernels apply each sub-block's scale once per block
// instead of once per pair of code registers.
//
// In file order a 512-bit register of codes (64 bytes) holds four Q6_K
// sub-blocks of 16, or two Q4_K sub-blocks of 32, and vpdpbusd's 32-bit
// lanes (4 products each) mix scales within the register: the kernels pack
// the lane sums to int16 and multiply them by the scales (vpackssdw +
// vpdpwssd per two registers, gemm_kquant_rows.inc). In lane order the
// four code registers of a super-block hold, in lane i, four codes each of
// one sub-block: i for Q6_K's 16, i % 8 for Q4_K's 8. So the four vpdpbusd
// of a block accumulate into one register whose lane i is sub-block i's
// whole sum, and one conversion and one FMA with the per-lane d * sc scale
// it (docs/model-files.md, "Lane order").
//
// A lane-order block is a file-order block (same struct, same scales, d and
// dmin, each still the scale of its 16 or 32 elements) whose codes are
// permuted: the code of element e sits where the file order keeps element
// Slot(e). Moving each code back (FromLaneOrder) gives the file block. The activations are permuted the same
// way once per call (QuantizedActivationsK::q_lanes16 / q_lanes32).
// Never written to a file: the loader makes these types
// (model/lane_repack.h).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lineage::quant {

// The file type a lane-order type permutes (itself for any other type).
constexpr DType FileTypeOf(DType t) {
  return t == DType::kQ4_K_LANES ? DType::kQ4_K : t == DType::kQ6_K_LANES ? DType::kQ6_K : t;
}
// The lane-order type of a file type, or t itself where there is none.
constexpr DType LaneTypeOf(DType t) {
  return t == DType::kQ4_K ? DType::kQ4_K_LANES : t == DType::kQ6_K ? DType::kQ6_K_LANES : t;
}
constexpr bool IsLaneOrder(DType t) { return t == DType::kQ4_K_LANES || t == DType::kQ6_K_LANES; }

// Register r (0..3), lane i (0..15), byte j (0..3) of the kernel's view of
// a lane-order block holds element LaneElement(t, r, i, j) of the block.
constexpr int LaneElement(DType t, int r, int i, int j) {
  return t == DType::kQ6_K_LANES ? 16 * i + 4 * r + j : 32 * (i % 8) + 16 * (i / 8) + 4 * r + j;
}

// Where the file order keeps the code that byte p (0..63) of register r
// holds, as an element index of the file type's decoded block: Q6_K's
// register r is elements 64 r..64 r + 63 in order; Q4_K's is the low (r
// even) or high nibbles of qs bytes 64 (r / 2)..+63, whose byte B keeps
// element 64 (B / 32) + B % 32 in its low nibble and 32 more in its high.
constexpr int RegisterSlot(DType t, int r, int p) {
  if (t == DType::kQ6_K_LANES) return 64 * r + p;
  const int byte = 64 * (r / 2) + p;
  return 64 * (byte / 32) + 32 * (r % 2) + byte % 32;
}

// A lane's four codes are four elements in a row in every order, so the
// orders are maps of 4-byte words: word w holds elements 4 w..4 w + 3.
struct LaneWords {
  uint8_t file_word[64];      // element word -> the file order's word holding it
  uint8_t element_word[64];   // the inverse: file order's word -> element word
  uint8_t register_word[64];  // the kernel's word 16 r + i (register r, lane i) -> element word
};
const LaneWords& WordsOf(DType lane_type);

// The lane-order form of n file-order blocks of `file_type` (Q4_K, Q6_K)
// at src, into dst (the same size; src == dst is allowed).
void ToLaneOrder(DType file_type, const uint8_t* src, int64_t n, uint8_t* dst);

// The file-order blocks back (the inverse of ToLaneOrder): n blocks of
// `lane_type` at src into dst (the same size; src == dst is allowed).
void FromLaneOrder(DType lane_type, const uint8_t* src, int64_t n, uint8_t* dst);

// x (one token, cols a multiple of 256) in the kernel's order for
// `lane_type`: word k of each 256-element block out is element word
// register_word[k] of x.
void PermuteToLanes(DType lane_type, const int8_t* x, int64_t cols, int8_t* out);

}  // namespace lineage::quant
