// AVX-512 build of the super-block integer row kernels
// (gemm_kquant_rows.inc): vpmaddubsw, then one VNNI vpdpwssd with the
// sub-block scales.
#include <immintrin.h>

#include <cstring>
#include <type_traits>
#include <utility>

#include "core/gemm_internal.h"
#include "core/quant_unpack.h"
#include "core/simd_avx512.h"  // also silences GCC 12 on the intrinsics headers

namespace lineage::kernels::avx512 {
#define LINEAGE_SIMD_ATTR LINEAGE_AVX512
#define LINEAGE_KQ_VNNI 1
#include "core/gemm_kquant_rows.inc"
#undef LINEAGE_KQ_VNNI
#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx512
