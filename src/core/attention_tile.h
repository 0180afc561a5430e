// AttentionTile: causal softmax attention of a block of queries that share
// one key/value head (a GQA group over several rows), computed a block of
// keys at a time with an online softmax (running max and sum per query, as in
// flash attention), so no score row of the whole context is ever stored.
//
// Per block of keys the work is two small matrix products on SIMD tiles:
//   S^T[key][query] = K · Qᵀ   queries pre-scaled and transposed once per
//                              block (Qᵀ: [head_dim][queries]); each key
//                              element is broadcast against a vector of
//                              queries, so K (f32 or bf16) is read in place
//   O[query][d]    += Pᵀ · V   P = exp(S - running max), V read in place
// and the softmax statistics are vectors over queries. A block of at most 8
// queries (a decode step) computes its scores as dot products along head_dim
// instead, so no SIMD lane is spent on absent queries.
//
// Queries: row r of the block, head g of the group is query i = r * group + g;
// it sits at position first_pos + r and attends to keys [0, first_pos + r].
//
// Contract: Begin(), then AddKeys() for consecutive key ranges starting at
// key 0 (each range any length), then Finish(), which writes each query's
// output row. Keys past a query's position are masked. A running max starts
// at a finite floor, so a query that has seen no key yet stays at zero
// weight without a NaN (masked blocks rely on it).
// head_dim must be a multiple of 16 (real models: 64, 128, 256).
//
// A part of a split run: the key ranges may instead start at any key that
// every query sees, and FinishPart() ends the tile: it leaves each output row
// unnormalised with the query's running max and sum beside it, and
// MergeAttentionParts() combines the parts of the whole key range.
//
// Ownership: the tile owns its scratch (reused across blocks, grown on
// demand); it reads the query and key/value memory given to it and writes the
// output rows only. Thread-safety: one tile per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace lineage::kernels {

struct AttentionQueries {
  const float* q = nullptr;  // row r, head g at q + r * ldq + g * head_dim
  int64_t ldq = 0;
  float* out = nullptr;      // likewise, out + r * ldo + g * head_dim
  int64_t ldo = 0;
  int64_t num_rows = 0;
  int64_t group = 1;         // query heads per kv head
  int64_t head_dim = 0;      // multiple of 16
  int64_t first_pos = 0;     // position of row 0
  float scale = 1.0f;        // applied to q · k
  // Each query's scores from the kernel one row of the block would get
  // alone (a decode step's), however many rows there are: verified draft
  // rows then equal decode rows bit for bit.
  bool rows_as_decode = false;
};

class AttentionTile {
 public:
  // Keys handled per inner step: the score tile [kKeyBlock][queries].
  static constexpr int64_t kKeyBlock = 64;

  void Begin(const AttentionQueries& queries);
  // Keys [first_key, first_key + n): n rows of head_dim elements of `dtype`
  // (kF32 or kBF16) at k and v, row after row.
  void AddKeys(int64_t first_key, int64_t n, const void* k, const void* v, DType dtype);
  // The same where query row r sees key j only if visible[j * num_rows + r]
  // is nonzero (and j is not past its position): sparse attention over a
  // block of keys several rows selected. A row may see none of a block's
  // keys; by Finish() every row must have seen one.
  void AddKeysMasked(int64_t first_key, int64_t n, const void* k, const void* v, DType dtype,
                     const uint8_t* visible);
  void Finish();
  // Instead of Finish(): query i's row holds sum_j exp(s_j - max[i]) v_j over
  // the keys given, sum[i] the sum of those weights.
  void FinishPart(float* max, float* sum);

  // The last key any query of the block sees: first_pos + num_rows - 1.
  int64_t last_key() const { return q_.first_pos + q_.num_rows - 1; }

 private:
  void AddBlock(int64_t first_key, int64_t n, const void* k, const void* v, DType dtype, const uint8_t* visible);

  AttentionQueries q_;
  int64_t num_queries_ = 0;
  bool few_ = false;               // scores as dot products along head_dim (q_rows_), not from qt_
  int64_t ldq_t_ = 0;              // padded query count: row stride of qt_ and s_
  std::vector<float> qt_;          // [head_dim][ldq_t_], scaled queries, zero padded
  std::vector<float> q_rows_;      // [num_queries_][head_dim], scaled: few-query blocks only
  std::vector<float> s_;           // [kKeyBlock][ldq_t_] scores, then probabilities
  std::vector<float> limit_;       // [ldq_t_] last visible key per query (exact below 2^24 tokens)
  std::vector<float> max_, sum_, alpha_;  // [ldq_t_] running max, running sum, rescale of this block
  std::vector<float*> out_rows_;   // [num_queries_]
};

// One query's output from the parts of its key range, each given as
// FinishPart() left it: out = sum_p exp(max_p - M) out_p / sum_p exp(max_p - M)
// sum_p with M the largest max_p, the parts taken in order. Part p's row is
// part_out + p * out_stride, its max and sum part_max[p * stride],
// part_sum[p * stride].
void MergeAttentionParts(int64_t parts, const float* part_out, int64_t out_stride, const float* part_max,
                         const float* part_sum, int64_t stride, int64_t head_dim, float* out);

}  // namespace lineage::kernels
