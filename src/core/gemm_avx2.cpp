// AVX2+FMA GEMM kernels: the shared row and tile kernels (gemm_rows.inc,
// gemm_tiles.inc) plus the 32-element integer row kernels
// (gemm_block32_rows.inc: Q8_0 without VNNI, the 4- and 5-bit types).
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

// Q8_0 rows against int8 activations: the 32-element block kernel
// (gemm_block32_rows.inc, included below), |w| against x with w's sign.
static void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end, const QuantizedActivations& qx,
                       float* Y, int64_t ldy, int64_t T);

#define LINEAGE_ROW_TOKENS_6 0
#include "core/quant_decode.inc"
#include "core/gemm_rows.inc"
#define LINEAGE_BLOCK32_DECODE_STREAMS 4
#include "core/gemm_block32_rows.inc"
#undef LINEAGE_BLOCK32_DECODE_STREAMS
#undef LINEAGE_ROW_TOKENS_6
#include "core/gemm_tiles.inc"

static void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end, const QuantizedActivations& qx,
                       float* Y, int64_t ldy, int64_t T) {
  b32::Rows<DType::kQ8_0>(W, row_begin, row_end, qx, Y, ldy, T);
}

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
