// Per-ISA kernels of AttentionTile (attention_tile.h), written once in
// attention_tile.inc. Query ranges are multiples of 16 (a whole number of
// vectors on either ISA); s and p are [keys][lds] with lds a multiple of 16.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/isa.h"

namespace lineage::kernels {

// Up to this many queries per block take the dot-product score kernel.
constexpr int64_t kFewQueries = 8;

#define LINEAGE_DECLARE_ATTENTION_TILE(A)                                                                  \
  /* s[j][i] = sum_d qt[d][i] * k[j][d], keys j < n, queries [q_begin, q_end) */                           \
  A void AttnScores(const float* qt, int64_t lds, int64_t q_begin, int64_t q_end, int64_t head_dim,       \
                    const void* k, DType dtype, int64_t n, float* s);                                      \
  /* The same for num_queries <= kFewQueries queries given as rows q[i][d] (s columns past them untouched), */ \
  /* prefetching the same keys' V rows v for AttnValues. */                                                      \
  A void AttnScoresFew(const float* q, int64_t num_queries, int64_t head_dim, const void* k, const void* v,     \
                       DType dtype, int64_t n, float* s, int64_t lds);                                          \
  /* Masks keys past each query's limit (when `masked`), folds the block into the running max and sum, */ \
  /* turns s into probabilities and leaves each query's rescale of its old output in alpha. */            \
  A void AttnSoftmax(float* s, int64_t lds, int64_t n, int64_t q_begin, int64_t q_end, int64_t first_key, \
                     bool masked, const float* limit, float* max, float* sum, float* alpha);               \
  /* out_rows[i] = out_rows[i] * alpha[i] + sum_j p[j][i] * v[j], queries [q_begin, q_end) */              \
  A void AttnValues(const float* p, int64_t lds, int64_t n, const void* v, DType dtype, int64_t head_dim, \
                    float* const* out_rows, const float* alpha, int64_t q_begin, int64_t q_end);

namespace avx2 {
LINEAGE_DECLARE_ATTENTION_TILE()
}
namespace avx512 {
LINEAGE_DECLARE_ATTENTION_TILE(LINEAGE_AVX512)
}

#undef LINEAGE_DECLARE_ATTENTION_TILE

}  // namespace lineage::kernels
