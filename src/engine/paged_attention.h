// Causal GQA softmax attention of new query rows against one attention
// layer's keys and values in a sequence's page table (spec §3, §11).
//
// Query row t of a run starting at position p0 sits at position p0 + t and
// attends to keys [0, p0 + t] — the cached rows and the run's own rows up to
// itself, which the caller has already written into the pages. Query head h
// reads kv head h / (num_heads / num_kv_heads). Scores and softmax in fp32.
//
// One call serves every query head of one kv head for a block of rows, so
// each key and value row is read from memory once for all of them (GQA
// groups and neighbouring rows share it) rather than once per query: the
// pages are fed in order to a kernels::AttentionTile (online softmax over
// SIMD score and value tiles, f32 or bf16 pages read in place).
#pragma once

#include <cstdint>

#include "cache/kv_pages.h"

namespace lineage::engine {

struct AttentionRun {
  const cache::PageTable* kv = nullptr;
  int64_t layer = 0;        // attention-layer index in the page layout
  int64_t start_pos = 0;    // p0
  int64_t num_heads = 0;    // query heads
  float scale = 1.0f;       // 1 / sqrt(head_dim)
};

// Query rows [row_begin, row_end) of the run, every query head of `kv_head`.
// q row t of head h is q + t * ldq + h * head_dim; the output likewise in
// `out` with ldo.
void AttendGroup(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                 int64_t ldq, float* out, int64_t ldo);

// The same result one dot product and one axpy per (query, key), with every
// query's whole score row stored and a separate softmax: the form the tiled
// kernel replaced. AttendGroup falls back to it for head sizes that are not a
// multiple of 16; bench_engine_attention compares the two.
void AttendGroupByRows(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                       int64_t ldq, float* out, int64_t ldo);

}  // namespace lineage::engine
