// AVX-512 GEMM kernels: the shared row and tile kernels (gemm_rows.inc,
// gemm_tiles.inc) plus the Q8_0 integer dot product with VNNI.
#include <cstring>
#include <vector>

#include "core/gemm_internal.h"
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
using namespace simd512;  // NOLINT: the .inc files are written against these names
#define LINEAGE_SIMD_ATTR LINEAGE_AVX512

constexpr int kTileTokens = 12;  // 24 accumulators + 2 weight vectors of 32 registers

// Q8_0 rows against int8 activations. Two blocks per 512-bit vector; the
// unsigned x signed vpdpbusd gets |w| and x carrying w's sign (GGML's trick).
LINEAGE_SIMD_ATTR static void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                                         const QuantizedActivations& qx, float* Y, int64_t ldy,
                                         int64_t T) {
  const int64_t num_blocks = W.cols() / 32;
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t r0 = row_begin; r0 < row_end; r0 += 4) {
    const int64_t nr = row_end - r0 < 4 ? row_end - r0 : 4;
    const uint8_t* rows[4];
    for (int k = 0; k < 4; ++k) rows[k] = W.row_ptr(r0 + (k < nr ? k : 0));
    for (int64_t t = 0; t < T; ++t) {
      const int8_t* xq = qx.row(t);
      const float* xd = qx.row_scale(t);
      VecF acc[4] = {Zero(), Zero(), Zero(), Zero()};
      int64_t b = 0;
      for (; b + 2 <= num_blocks; b += 2) {
        const __m512i xv = _mm512_loadu_si512(xq + b * 32);
        for (int k = 0; k < 4; ++k) {
          const uint8_t* blk = rows[k] + b * 34;
          const __m512i w = _mm512_inserti64x4(
              _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2))),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 36)), 1);
          const __m512i sx = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(w), zero, xv);
          const __m512i dot = _mm512_dpbusd_epi32(zero, _mm512_abs_epi8(w), sx);
          uint16_t h0, h1;
          std::memcpy(&h0, blk, 2);
          std::memcpy(&h1, blk + 34, 2);
          const __m512 scale = _mm512_insertf32x8(_mm512_set1_ps(_cvtsh_ss(h0) * xd[b]),
                                                  _mm256_set1_ps(_cvtsh_ss(h1) * xd[b + 1]), 1);
          acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc[k]);
        }
      }
      float tail[4] = {0, 0, 0, 0};
      if (b < num_blocks) {  // an odd last block, in 256 bits
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32));
        for (int k = 0; k < 4; ++k) {
          const uint8_t* blk = rows[k] + b * 34;
          const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
          const __m256i dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w),
                                                  _mm256_sign_epi8(xv, w));
          uint16_t h;
          std::memcpy(&h, blk, 2);
          __m128i s = _mm_add_epi32(_mm256_castsi256_si128(dot), _mm256_extracti128_si256(dot, 1));
          s = _mm_hadd_epi32(s, s);
          s = _mm_hadd_epi32(s, s);
          tail[k] = static_cast<float>(_mm_cvtsi128_si32(s)) * _cvtsh_ss(h) * xd[b];
        }
      }
      for (int k = 0; k < nr; ++k) Y[t * ldy + r0 + k] = HSum(acc[k]) + tail[k];
    }
  }
}

#include "core/gemm_rows.inc"
#include "core/gemm_tiles.inc"

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx512
