// AVX2+FMA GEMM kernels: the shared row and tile kernels (gemm_rows.inc,
// gemm_tiles.inc) plus the Q8_0 integer dot product without VNNI and the
// 4- and 5-bit 32-element ones (gemm_block32_rows.inc).
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
// Rows are read one after another, a single stream front to back, against
// up to kQ8RowTokens tokens at once; each row's sums stay in a vector until
// a group of kLanes rows ends, where one HSumEach per token sums them all.
constexpr int kQ8RowTokens = 4;

template <int TB>
static void Q8RowGroup(const uint8_t* rows, int64_t row_bytes, int64_t nr, int64_t num_blocks,
                       const QuantizedActivations& qx, int64_t t0, float* Y, int64_t ldy) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int64_t ahead = RowPrefetchBytes(row_bytes);
  const int8_t* xq[TB];
  const float* xd[TB];
  for (int t = 0; t < TB; ++t) xq[t] = qx.row(t0 + t), xd[t] = qx.row_scale(t0 + t);
  VecF sums[TB][kLanes];
  for (int64_t k = 0; k < nr; ++k) {
    const uint8_t* row = rows + k * row_bytes;
    // Even and odd blocks in accumulators of their own: with one, each
    // block waited on the previous block's FMA (4 cycles per 34 bytes).
    VecF acc[2][TB];
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) acc[0][t] = acc[1][t] = Zero();
    const auto block = [&](int64_t b, VecF* a) {
      const uint8_t* blk = row + b * 34;
      _mm_prefetch(reinterpret_cast<const char*>(blk + ahead), _MM_HINT_T1);
      PrimePageAhead(blk, 34);
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      const __m256i wabs = _mm256_abs_epi8(w);
      uint16_t h;
      std::memcpy(&h, blk, 2);
      const float d = _cvtsh_ss(h);
#pragma GCC unroll 4
      for (int t = 0; t < TB; ++t) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[t] + b * 32));
        const __m256i p32 = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, _mm256_sign_epi8(xv, w)), ones);
        a[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32), _mm256_set1_ps(d * xd[t][b]), a[t]);
      }
    };
    int64_t b = 0;
    for (; b + 1 < num_blocks; b += 2) block(b, acc[0]), block(b + 1, acc[1]);
    if (b < num_blocks) block(b, acc[0]);
#pragma GCC unroll 4
    for (int t = 0; t < TB; ++t) sums[t][k] = _mm256_add_ps(acc[0][t], acc[1][t]);
  }
  for (int t = 0; t < TB; ++t) StoreEachSum(sums[t], nr, Y + t * ldy);
}

static void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                       const QuantizedActivations& qx, float* Y, int64_t ldy, int64_t T) {
  const int64_t num_blocks = W.cols() / 32, row_bytes = num_blocks * 34;
  const auto* base = static_cast<const uint8_t*>(W.data);
  for (int64_t r = row_begin; r < row_end; r += kLanes) {
    const int64_t nr = std::min<int64_t>(kLanes, row_end - r);
    const uint8_t* rows = base + r * row_bytes;
    for (int64_t t0 = 0; t0 < T; t0 += kQ8RowTokens) {
      float* y = Y + t0 * ldy + r;
      switch (std::min<int64_t>(kQ8RowTokens, T - t0)) {
        case 1: Q8RowGroup<1>(rows, row_bytes, nr, num_blocks, qx, t0, y, ldy); break;
        case 2: Q8RowGroup<2>(rows, row_bytes, nr, num_blocks, qx, t0, y, ldy); break;
        case 3: Q8RowGroup<3>(rows, row_bytes, nr, num_blocks, qx, t0, y, ldy); break;
        default: Q8RowGroup<4>(rows, row_bytes, nr, num_blocks, qx, t0, y, ldy); break;
      }
    }
  }
}

#define LINEAGE_ROW_TOKENS_6 0
#define LINEAGE_ROWS_SEQUENTIAL 1
#include "core/quant_decode.inc"
#include "core/gemm_rows.inc"
#include "core/gemm_block32_rows.inc"
#undef LINEAGE_ROW_TOKENS_6
#undef LINEAGE_ROWS_SEQUENTIAL
#include "core/gemm_tiles.inc"

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
