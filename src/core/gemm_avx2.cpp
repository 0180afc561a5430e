// AVX2+FMA GEMM kernels: the shared row and tile kernels (gemm_rows.inc,
// gemm_tiles.inc) plus the Q8_0 integer dot product without VNNI and the
// Q4_0 one (gemm_q4_0_rows.inc).
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/gemm_internal.h"
#include "core/quant_unpack.h"
#include "core/simd_avx2.h"

namespace lineage::kernels::avx2 {
using namespace simd256;  // NOLINT: the .inc files are written against these names
#define LINEAGE_SIMD_ATTR

constexpr int kTileTokens = 6;  // 12 accumulators + 2 weight vectors + 1 broadcast of 16 registers

// Q8_0 rows against int8 activations, one block per 256-bit vector:
// maddubs(|w|, sign(x, w)) then madd with ones gives 8 int32 partial sums
// (|w| <= 128 and |x| <= 127, so the int16 pair sums cannot saturate).
static void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                       const QuantizedActivations& qx, float* Y, int64_t ldy, int64_t T) {
  const int64_t num_blocks = W.cols() / 32;
  const int64_t row_bytes = num_blocks * 34;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t r0 = row_begin; r0 < row_end; r0 += 4) {
    const uint8_t* rows[4];
    const int64_t nr = RowGroup(W, row_bytes, r0, row_end, rows);
    for (int64_t t = 0; t < T; ++t) {
      const int8_t* xq = qx.row(t);
      const float* xd = qx.row_scale(t);
      VecF acc[4] = {Zero(), Zero(), Zero(), Zero()};
      for (int64_t b = 0; b < num_blocks; ++b) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32));
        for (int k = 0; k < 4; ++k) {
          const uint8_t* blk = rows[k] + b * 34;
          _mm_prefetch(reinterpret_cast<const char*>(blk + RowPrefetchBytes(row_bytes)), _MM_HINT_T1);
          PrimePageAhead(blk, 34);
          const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
          const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(xv, w));
          const __m256i p32 = _mm256_madd_epi16(p16, ones);
          uint16_t h;
          std::memcpy(&h, blk, 2);
          acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32), _mm256_set1_ps(_cvtsh_ss(h) * xd[b]), acc[k]);
        }
      }
      for (int k = 0; k < nr; ++k) Y[t * ldy + r0 + k] = HSum(acc[k]);
    }
  }
}

#define LINEAGE_ROW_TOKENS_6 0
#include "core/quant_decode.inc"
#include "core/gemm_rows.inc"
#include "core/gemm_q4_0_rows.inc"
#undef LINEAGE_ROW_TOKENS_6
#include "core/gemm_tiles.inc"

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
