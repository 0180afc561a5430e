// The GGML block formats as C structs: the one place their byte layout is
// written in code. docs/model-files.md ("Block types") describes each in
// prose with the order of the elements; every size is pinned here against
// the dtype table (core/dtype.cpp) by static_assert and a test.
//
// Structs are read in place from the mapped file with memcpy-free pointer
// casts: every member is a byte array or a naturally aligned uint16_t at an
// even offset, so a block at any 2-byte-aligned address may be cast (GGUF
// tensors start 32-byte aligned and every block size but MXFP4's is even;
// MXFP4's block is bytes only, so any address will do).
// Half-precision fields are raw IEEE fp16 bits (HalfToFloat decodes them).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace lineage::quant {

constexpr int kQK = 32;    // elements of a legacy block (Q4_0 .. Q8_0, IQ4_NL)
constexpr int kQK_K = 256; // elements of a K-quant / IQ4_XS super-block

struct BlockQ4_0 { uint16_t d; uint8_t qs[16]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[16]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[32]; };
struct BlockIQ4_NL { uint16_t d; uint8_t qs[16]; };
struct BlockMXFP4 { uint8_t e; uint8_t qs[16]; };  // bytes only: read at any address

struct BlockQ2_K { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; };
struct BlockQ3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; };
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
struct BlockQ6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; };
struct BlockIQ4_XS { uint16_t d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; };

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockIQ4_NL) == 18 &&
              sizeof(BlockMXFP4) == 17);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210 && sizeof(BlockIQ4_XS) == 136);

// The non-linear 4-bit code book of IQ4_NL and IQ4_XS.
inline constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// MXFP4's code book: the E2M1 values doubled, so that they are integers;
// its scale is halved to match (E8M0Half).
inline constexpr int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e - 128): an E8M0 exponent byte halved, as MXFP4's scale. Built from
// the bits (e < 2 is an f32 subnormal) so that it is exact and constexpr.
constexpr float E8M0HalfOf(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return __builtin_bit_cast(float, bits);
}
// The same as one load: the row kernels read a scale per block.
inline constexpr auto kE8M0Half = [] {
  std::array<float, 256> t{};
  for (int e = 0; e < 256; ++e) t[e] = E8M0HalfOf(static_cast<uint8_t>(e));
  return t;
}();
inline float E8M0Half(uint8_t e) { return kE8M0Half[e]; }

// The 6-bit scale and min of sub-block s (< 8) of a Q4_K / Q5_K block.
inline void ScaleMinK4(const uint8_t* scales, int s, uint8_t* sc, uint8_t* m) {
  if (s < 4) {
    *sc = scales[s] & 63;
    *m = scales[s + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((scales[s + 4] >> 4) | ((scales[s] >> 6) << 4));
  }
}

// The signed scale (-32 .. 31) of sub-block s (< 16) of a Q3_K block.
inline int ScaleQ3K(const uint8_t* scales, int s) {
  const int low = s < 8 ? scales[s] & 15 : scales[s - 8] >> 4;
  const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (low | high << 4) - 32;
}

// The signed scale (-32 .. 31) of sub-block s (< 8) of an IQ4_XS block.
inline int ScaleIQ4XS(const BlockIQ4_XS& b, int s) {
  const int ls = ((b.scales_l[s / 2] >> (4 * (s % 2))) & 15) | (((b.scales_h >> (2 * s)) & 3) << 4);
  return ls - 32;
}

// The byte offset of an E8M0 scale in a block of `t` (MXFP4), else -1; as
// HalfFields, for tools that fill blocks with random codes.
inline int E8M0Field(DType t) { return t == DType::kMXFP4 ? 0 : -1; }

// The fp16 fields of a block of `t`: byte offset in the block, and whether
// it is a min / offset (any sign) rather than a scale. For tools that fill
// blocks with random codes (tests, benchmarks) and must keep these finite.
struct HalfField {
  int offset;
  bool is_min;
};
inline std::vector<HalfField> HalfFields(DType t) {
  switch (t) {
    case DType::kQ4_0: case DType::kQ5_0: case DType::kQ8_0: case DType::kIQ4_NL: case DType::kIQ4_XS:
      return {{0, false}};
    case DType::kQ4_1: case DType::kQ5_1: case DType::kQ4_K: case DType::kQ5_K: case DType::kQ4_K_LANES:
      return {{0, false}, {2, true}};
    case DType::kQ2_K: return {{offsetof(BlockQ2_K, d), false}, {offsetof(BlockQ2_K, dmin), true}};
    case DType::kQ3_K: return {{offsetof(BlockQ3_K, d), false}};
    case DType::kQ6_K: case DType::kQ6_K_LANES: return {{offsetof(BlockQ6_K, d), false}};
    default: return {};
  }
}

}  // namespace lineage::quant
