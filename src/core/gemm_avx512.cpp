// AVX-512 GEMM kernels: the shared row and tile kernels (gemm_rows.inc,
// gemm_tiles.inc) and the 4- and 5-bit 32-element integer row kernels
// (gemm_block32_rows.inc); the Q8_0 ones are in gemm_q8_*_avx512.cpp.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/gemm_internal.h"
#include "core/quant_unpack.h"
#include "core/simd_avx2.h"  // gemm_block32_rows.inc's row sums
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
using namespace simd512;  // NOLINT: the .inc files are written against these names
#define LINEAGE_SIMD_ATTR LINEAGE_AVX512

constexpr int kTileTokens = 12;  // 24 accumulators + 2 weight vectors of 32 registers

// Defined in gemm_q8_rows_avx512.cpp.
LINEAGE_SIMD_ATTR void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                                  const QuantizedActivations& qx, float* Y, int64_t ldy, int64_t T);

#define LINEAGE_ROW_TOKENS_6 1
#include "core/quant_decode.inc"
#include "core/gemm_rows.inc"
#define LINEAGE_BLOCK32_DECODE_STREAMS 1
#include "core/gemm_block32_rows.inc"
#undef LINEAGE_BLOCK32_DECODE_STREAMS
#undef LINEAGE_ROW_TOKENS_6
#include "core/gemm_tiles.inc"

#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx512
