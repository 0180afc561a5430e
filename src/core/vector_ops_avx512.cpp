// AVX-512 instantiation of vector_ops.inc.
#include <cmath>

#include "core/simd_avx512.h"
#include "core/vector_ops.h"

namespace lineage::kernels::avx512 {
using namespace simd512;  // NOLINT: the .inc is written against these names
#define LINEAGE_SIMD_ATTR LINEAGE_AVX512
#include "core/vector_ops.inc"
#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx512
