// AVX2 build of the super-block integer row kernels (gemm_kquant_rows.inc):
// vpmaddubsw, then vpmaddwd + vpaddd with the sub-block scales.
#include <immintrin.h>

#include <cstring>
#include <type_traits>
#include <utility>

#include "core/gemm_internal.h"
#include "core/quant_unpack.h"
#include "core/simd_avx2.h"

namespace lineage::kernels::avx2 {
#define LINEAGE_SIMD_ATTR
#define LINEAGE_KQ_VNNI 0
#include "core/gemm_kquant_rows.inc"
#undef LINEAGE_KQ_VNNI
#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
