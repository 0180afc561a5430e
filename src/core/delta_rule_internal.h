// Per-ISA entry points of the gated delta rule and the KDA rule; kernels.cpp
// dispatches to them. Same contracts as DeltaRuleRecurrent / DeltaRuleChunked
// in kernels.h and KdaRecurrent / KdaChunked in kda_rule.h.
#pragma once

#include <cstdint>

#include "core/isa.h"
#include "core/kernels.h"

namespace lineage::kernels {

#define LINEAGE_DECLARE_DELTA_RULE(A)                                                              \
  A void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, \
                            const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,   \
                            int64_t dv, float* S, float* o, int64_t ldo, const RecurrentOutputs& out); \
  A void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,   \
                          const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,     \
                          int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk);                 \
  A void KdaRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,         \
                      const float* g, int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, \
                      int64_t dv, float* S, float* o, int64_t ldo, const RecurrentOutputs& out);          \
  A void KdaChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,           \
                    const float* g, int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk,   \
                    int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk);                  \
  A void DeltaRuleReplay(const float* log, int64_t n, int64_t dk, int64_t dv, float* S);

namespace avx2 {
LINEAGE_DECLARE_DELTA_RULE()
}
namespace avx512 {
LINEAGE_DECLARE_DELTA_RULE(LINEAGE_AVX512)
}
#undef LINEAGE_DECLARE_DELTA_RULE

}  // namespace lineage::kernels
