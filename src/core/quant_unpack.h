// QuantUnpack: the first half of every fast block decoder. One block of any
// quantized DType becomes int8 codes plus one (scale, bias) pair per
// sub-block, so that element i is exactly
//     y[i] = q[i] * scale[i / sub]            (has_bias == false)
//     y[i] = q[i] * scale[i / sub] + bias[..] (has_bias == true)
// with the same float roundings as the scalar reference (core/dequant.cpp):
// where ggml adds, the product q * scale is exact (at most 11 + 6 + 6 bits),
// so a fused multiply-add rounds once like the reference's separate ops;
// where it only multiplies there is no bias (a +0 bias would turn -0 into +0).
// The second half (codes to floats, one vector per ISA width) is in
// quant_decode.inc.
//
// Written with AVX2 integer intrinsics, the baseline of the build: static
// inline functions that inline into the AVX-512 kernels as well. Pure.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/lane_order.h"
#include "core/quant_blocks.h"

namespace lineage::quant {

struct Unpacked {
  alignas(32) int8_t q[kQK_K];  // codes, offsets already applied
  float scale[16];
  float bias[16];
  int sub = 32;                 // elements per sub-block (16 or 32)
  int num_sub = 1;              // sub-blocks in this block
  bool has_bias = false;
};

namespace unpack_detail {

inline __m128i Load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m256i Load32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void Store16(int8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
inline void Store32(int8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
inline __m128i Lo4(__m128i v) { return _mm_and_si128(v, _mm_set1_epi8(15)); }
inline __m128i Hi4(__m128i v) { return _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(15)); }
inline __m256i Lo4(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(15)); }
inline __m256i Hi4(__m256i v) { return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(15)); }
// Byte i of the result is (v's byte i >> shift) & mask, shift < 8.
inline __m256i Bits(__m256i v, int shift, int mask) {
  return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(static_cast<char>(mask)));
}
// 32 bytes, byte i = 16 when bit i of the little-endian u32 at p is set.
inline __m256i FifthBits(const uint8_t* p) {
  uint32_t h;
  std::memcpy(&h, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(h)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
}
inline __m128i IQ4Lookup(__m128i codes) {
  return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)), codes);
}
inline __m256i IQ4Lookup(__m256i codes) {
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values))),
                             codes);
}
inline __m128i MXFP4Lookup(__m128i codes) {
  return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values)), codes);
}
inline __m256i MXFP4Lookup(__m256i codes) {
  return _mm256_shuffle_epi8(
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values))), codes);
}
// The n <= 2 fp16 values at p (their bits xor-ed with `flip`, e.g. a sign)
// as floats in lanes 0..n-1, 0 above: by one vector conversion, where
// _cvtsh_ss went through an insert and two moves between register files.
inline __m128 HalvesAt(const void* p, int n, uint32_t flip = 0) {
  uint32_t h = 0;
  std::memcpy(&h, p, static_cast<size_t>(n) * 2);
  return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(h ^ flip)));
}
inline float H(uint16_t h) { return _cvtsh_ss(h); }

// Rows i of r hold 8 dwords each; afterwards row g holds dword g of every
// input row, in row order.
inline void Transpose8x8(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, then 4-7
    u[4 * h + 0] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);
    u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);
    u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
    u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
  }
  for (int g = 0; g < 4; ++g) {
    r[g] = _mm256_permute2x128_si256(u[g], u[4 + g], 0x20);
    r[4 + g] = _mm256_permute2x128_si256(u[g], u[4 + g], 0x31);
  }
}

}  // namespace unpack_detail

// REQUIRES: t is quantized (IsQuantized(t)); src points at one block.
// A template so that a decoder's loop over blocks has the type's layout
// folded in (the switch below is on a constant).
template <DType t>
inline __attribute__((always_inline)) void UnpackBlock(const uint8_t* src, Unpacked* u) {
  using namespace unpack_detail;
  u->has_bias = false;
  switch (t) {
    case DType::kQ4_0:
    case DType::kIQ4_NL: {
      const auto& b = *reinterpret_cast<const BlockQ4_0*>(src);
      const __m128i v = Load16(b.qs);
      if (t == DType::kQ4_0) {
        Store16(u->q, _mm_sub_epi8(Lo4(v), _mm_set1_epi8(8)));
        Store16(u->q + 16, _mm_sub_epi8(Hi4(v), _mm_set1_epi8(8)));
      } else {
        Store16(u->q, IQ4Lookup(Lo4(v)));
        Store16(u->q + 16, IQ4Lookup(Hi4(v)));
      }
      u->sub = 32, u->num_sub = 1, u->scale[0] = H(b.d);
      return;
    }
    case DType::kMXFP4: {
      const auto& b = *reinterpret_cast<const BlockMXFP4*>(src);
      const __m128i v = Load16(b.qs);
      Store16(u->q, MXFP4Lookup(Lo4(v)));
      Store16(u->q + 16, MXFP4Lookup(Hi4(v)));
      u->sub = 32, u->num_sub = 1, u->scale[0] = E8M0Half(b.e);
      return;
    }
    case DType::kQ4_1: {
      const auto& b = *reinterpret_cast<const BlockQ4_1*>(src);
      const __m128i v = Load16(b.qs);
      Store16(u->q, Lo4(v));
      Store16(u->q + 16, Hi4(v));
      u->sub = 32, u->num_sub = 1, u->scale[0] = H(b.d), u->bias[0] = H(b.m), u->has_bias = true;
      return;
    }
    case DType::kQ5_0:
    case DType::kQ5_1: {
      const bool q51 = t == DType::kQ5_1;
      const uint8_t* qh = q51 ? reinterpret_cast<const BlockQ5_1*>(src)->qh : reinterpret_cast<const BlockQ5_0*>(src)->qh;
      const uint8_t* qs = q51 ? reinterpret_cast<const BlockQ5_1*>(src)->qs : reinterpret_cast<const BlockQ5_0*>(src)->qs;
      const __m128i v = Load16(qs);
      __m256i q = _mm256_or_si256(_mm256_set_m128i(Hi4(v), Lo4(v)), FifthBits(qh));
      if (!q51) q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
      Store32(u->q, q);
      u->sub = 32, u->num_sub = 1;
      if (q51) {
        const auto& b = *reinterpret_cast<const BlockQ5_1*>(src);
        u->scale[0] = H(b.d), u->bias[0] = H(b.m), u->has_bias = true;
      } else {
        u->scale[0] = H(reinterpret_cast<const BlockQ5_0*>(src)->d);
      }
      return;
    }
    case DType::kQ8_0: {
      const auto& b = *reinterpret_cast<const BlockQ8_0*>(src);
      std::memcpy(u->q, b.qs, 32);
      u->sub = 32, u->num_sub = 1, u->scale[0] = H(b.d);
      return;
    }
    case DType::kQ2_K: {
      const auto& b = *reinterpret_cast<const BlockQ2_K*>(src);
      const float d = H(b.d), dmin = H(b.dmin);
      for (int h = 0; h < 2; ++h) {
        const __m256i v = Load32(b.qs + 32 * h);
        for (int k = 0; k < 4; ++k) Store32(u->q + 128 * h + 32 * k, Bits(v, 2 * k, 3));
      }
      for (int s = 0; s < 16; ++s) {
        u->scale[s] = d * static_cast<float>(b.scales[s] & 15);
        u->bias[s] = -(dmin * static_cast<float>(b.scales[s] >> 4));
      }
      u->sub = 16, u->num_sub = 16, u->has_bias = true;
      return;
    }
    case DType::kQ3_K: {
      const auto& b = *reinterpret_cast<const BlockQ3_K*>(src);
      const float d = H(b.d);
      const __m256i hm = Load32(b.hmask), four = _mm256_set1_epi8(4);
      for (int h = 0; h < 2; ++h) {
        const __m256i v = Load32(b.qs + 32 * h);
        for (int k = 0; k < 4; ++k) {
          // low - 4 + 4 * high: the code is low - 4 where the high bit is clear.
          const __m256i high4 = _mm256_slli_epi16(Bits(hm, 4 * h + k, 1), 2);
          Store32(u->q + 128 * h + 32 * k, _mm256_sub_epi8(_mm256_add_epi8(Bits(v, 2 * k, 3), high4), four));
        }
      }
      for (int s = 0; s < 16; ++s) u->scale[s] = d * static_cast<float>(ScaleQ3K(b.scales, s));
      u->sub = 16, u->num_sub = 16;
      return;
    }
    case DType::kQ4_K:
    case DType::kQ5_K: {
      const bool q5 = t == DType::kQ5_K;
      const uint8_t* scales = q5 ? reinterpret_cast<const BlockQ5_K*>(src)->scales : reinterpret_cast<const BlockQ4_K*>(src)->scales;
      const uint8_t* qs = q5 ? reinterpret_cast<const BlockQ5_K*>(src)->qs : reinterpret_cast<const BlockQ4_K*>(src)->qs;
      const auto& head = *reinterpret_cast<const BlockQ4_K*>(src);  // d, dmin at the same place in both
      const float d = H(head.d), dmin = H(head.dmin);
      const __m256i qh = q5 ? Load32(reinterpret_cast<const BlockQ5_K*>(src)->qh) : _mm256_setzero_si256();
      for (int p = 0; p < 4; ++p) {
        const __m256i v = Load32(qs + 32 * p);
        __m256i lo = Lo4(v), hi = Hi4(v);
        if (q5) {
          lo = _mm256_or_si256(lo, _mm256_slli_epi16(Bits(qh, 2 * p, 1), 4));
          hi = _mm256_or_si256(hi, _mm256_slli_epi16(Bits(qh, 2 * p + 1, 1), 4));
        }
        Store32(u->q + 64 * p, lo);
        Store32(u->q + 64 * p + 32, hi);
      }
      for (int s = 0; s < 8; ++s) {
        uint8_t sc, m;
        ScaleMinK4(scales, s, &sc, &m);
        u->scale[s] = d * static_cast<float>(sc);
        u->bias[s] = -(dmin * static_cast<float>(m));
      }
      u->sub = 32, u->num_sub = 8, u->has_bias = true;
      return;
    }
    case DType::kQ6_K: {
      const auto& b = *reinterpret_cast<const BlockQ6_K*>(src);
      const float d = H(b.d);
      const __m256i off = _mm256_set1_epi8(32);
      for (int h = 0; h < 2; ++h) {
        const __m256i l0 = Load32(b.ql + 64 * h), l1 = Load32(b.ql + 64 * h + 32), hb = Load32(b.qh + 32 * h);
        const __m256i q[4] = {
            _mm256_or_si256(Lo4(l0), _mm256_slli_epi16(Bits(hb, 0, 3), 4)),
            _mm256_or_si256(Lo4(l1), _mm256_slli_epi16(Bits(hb, 2, 3), 4)),
            _mm256_or_si256(Hi4(l0), _mm256_slli_epi16(Bits(hb, 4, 3), 4)),
            _mm256_or_si256(Hi4(l1), _mm256_slli_epi16(Bits(hb, 6, 3), 4)),
        };
        for (int m = 0; m < 4; ++m) Store32(u->q + 128 * h + 32 * m, _mm256_sub_epi8(q[m], off));
      }
      for (int s = 0; s < 16; ++s) u->scale[s] = d * static_cast<float>(b.scales[s]);
      u->sub = 16, u->num_sub = 16;
      return;
    }
    case DType::kIQ4_XS: {
      const auto& b = *reinterpret_cast<const BlockIQ4_XS*>(src);
      const float d = H(b.d);
      for (int s = 0; s < 8; ++s) {
        const __m128i v = Load16(b.qs + 16 * s);
        Store16(u->q + 32 * s, IQ4Lookup(Lo4(v)));
        Store16(u->q + 32 * s + 16, IQ4Lookup(Hi4(v)));
        u->scale[s] = d * static_cast<float>(ScaleIQ4XS(b, s));
      }
      u->sub = 32, u->num_sub = 8;
      return;
    }
    case DType::kQ4_K_LANES:
    case DType::kQ6_K_LANES: {
      // The file type's unpack, then each run of 4 codes (one lane) moved
      // back to its elements: 8 gathers of 8 dwords.
      if constexpr (IsLaneOrder(t)) {
        // The file type's unpack, then each run of 4 codes (one lane, a
        // 32-bit word) moved back to its elements: word w of register k (of
        // 8) is elements 32 k + 4 w.., taken by 8 x 8 word transposes
        // (core/lane_order.h gives where each word lies):
        //   Q4_K: element word 8 k + m is file word 8 p(m) + k, p = 0 1 4 5 2 3 6 7;
        //   Q6_K: element word 8 k + m is file word 8 (2 (m % 4) + k / 4) + 2 (k % 4) + m / 4.
        Unpacked file;
        UnpackBlock<FileTypeOf(t)>(src, &file);
        __m256i r[8];
        if constexpr (t == DType::kQ4_K_LANES) {
          constexpr int kFrom[8] = {0, 1, 4, 5, 2, 3, 6, 7};
          for (int m = 0; m < 8; ++m) r[m] = Load32(reinterpret_cast<const uint8_t*>(file.q + 32 * kFrom[m]));
          Transpose8x8(r);
          for (int k = 0; k < 8; ++k) Store32(u->q + 32 * k, r[k]);
        } else {
          constexpr int kFrom[8] = {0, 2, 4, 6, 1, 3, 5, 7};
          for (int m = 0; m < 8; ++m) r[m] = Load32(reinterpret_cast<const uint8_t*>(file.q + 32 * kFrom[m]));
          Transpose8x8(r);
          for (int k = 0; k < 4; ++k) {
            Store32(u->q + 32 * k, _mm256_permute2x128_si256(r[2 * k], r[2 * k + 1], 0x20));
            Store32(u->q + 32 * (k + 4), _mm256_permute2x128_si256(r[2 * k], r[2 * k + 1], 0x31));
          }
        }
        std::memcpy(u->scale, file.scale, sizeof file.scale);
        std::memcpy(u->bias, file.bias, sizeof file.bias);
        u->sub = file.sub, u->num_sub = file.num_sub, u->has_bias = file.has_bias;
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace lineage::quant
