// AVX2+FMA instantiation of vector_ops.inc.
#include <cmath>

#include "core/simd_avx2.h"
#include "core/vector_ops.h"

namespace lineage::kernels::avx2 {
using namespace simd256;  // NOLINT: the .inc is written against these names
#define LINEAGE_SIMD_ATTR
#include "core/vector_ops.inc"
#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
