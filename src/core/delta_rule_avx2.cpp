// AVX2+FMA instantiation of delta_rule.inc.
#include <cmath>
#include <vector>

#include "core/delta_rule_internal.h"
#include "core/simd_avx2.h"
#include "core/vector_ops.h"

namespace lineage::kernels::avx2 {
using namespace simd256;  // NOLINT: the .inc is written against these names
#define LINEAGE_SIMD_ATTR 
#include "core/delta_rule.inc"
#undef LINEAGE_SIMD_ATTR
}  // namespace lineage::kernels::avx2
