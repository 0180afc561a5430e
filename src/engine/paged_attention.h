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
#include <span>

#include "cache/kv_pages.h"
#include "core/thread_pool.h"

namespace lineage::engine {

struct AttentionRun {
  const cache::PageTable* kv = nullptr;
  int64_t layer = 0;        // attention-layer index in the page layout
  int64_t start_pos = 0;    // p0
  int64_t num_heads = 0;    // query heads
  float scale = 1.0f;       // 1 / sqrt(head_dim)
  // Every row as a decode step of it alone would compute it (Segment::
  // rows_as_decode): the tile's per-row kernel and decode's key parts.
  bool rows_as_decode = false;
};

// Query rows [row_begin, row_end) of the run, every query head of `kv_head`.
// q row t of head h is q + t * ldq + h * head_dim; the output likewise in
// `out` with ldo.
void AttendGroup(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                 int64_t ldq, float* out, int64_t ldo);

// A short run's keys split into parts, each part attended on its own and
// the parts merged (kernels::MergeAttentionParts): the threads then share a
// decode step's or a warm turn's attention over a long context however few
// kv heads the model has (most hybrid models have 2) and however few rows
// the run has. A decode row (rows == 1) takes parts of kDecodePartKeys keys
// (whole pages of every layout in use); a block of several rows takes parts
// of a multiple of that, so that it has at most kMaxBlockParts + 1 of them
// (the part buffers hold rows x parts outputs). Whether a block is split,
// and where, depends on its first position and its length alone, never on
// the thread count or the batch, so its rows' results do too.
constexpr int64_t kDecodePartKeys = 2048;
constexpr int64_t kMaxBlockParts = 16;
struct KeyParts {
  int64_t part_keys = 0;  // keys per part: part k holds keys [k part_keys, (k + 1) part_keys)
  int64_t parts = 1;      // 1: not split
};
// The parts of a block of `rows` query rows whose first row sits at `pos`
// (the block never crosses a part boundary: AttendRuns cuts it there).
// Below two parts' worth of keys a block is not split.
KeyParts KeyPartsOf(const AttentionRun& run, int64_t pos, int64_t rows);

// Query rows [row_begin, row_end) of every query head of `kv_head` over keys
// [first_key, end_key) (first_key a multiple of the page size that every row
// sees; keys past a row's position are masked). Writes query i = r * group +
// g's unnormalised output to out + r * ldo + g * head_dim and its running max
// and sum to max[i], sum[i], as AttentionTile::FinishPart.
void AttendGroupPart(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, int64_t first_key,
                     int64_t end_key, const float* q, int64_t ldq, float* out, int64_t ldo, float* max, float* sum);

// One run's query rows for AttendRuns: `num_rows` rows from run.start_pos,
// every query head, row t of head h at q + t * ldq + h * head_dim with ldq =
// run.num_heads * head_dim; the output likewise.
struct AttentionRows {
  AttentionRun run;
  const float* q = nullptr;
  float* out = nullptr;
  int64_t num_rows = 0;
};

// Attention of every row of every run over `pool` (null: this thread): a
// task per (run, kv head, block of at most 64 rows), or, for a run of at
// most 64 rows (a decode step, a warm turn) over a long context, per part
// of its keys
// (KeyPartsOf), the parts merged after. `group_fn` serves the unsplit tasks
// (null: AttendGroup; bench_engine_attention passes AttendGroupByRows, with
// split off, to time the old form).
using AttendGroupFn = void (*)(const AttentionRun&, int64_t, int64_t, int64_t, const float*, int64_t, float*,
                               int64_t);
void AttendRuns(std::span<const AttentionRows> runs, ThreadPool* pool, AttendGroupFn group_fn = nullptr,
                bool split = true);

// The same result one dot product and one axpy per (query, key), with every
// query's whole score row stored and a separate softmax: the form the tiled
// kernel replaced. AttendGroup falls back to it for head sizes that are not a
// multiple of 16; bench_engine_attention compares the two.
void AttendGroupByRows(const AttentionRun& run, int64_t kv_head, int64_t row_begin, int64_t row_end, const float* q,
                       int64_t ldq, float* out, int64_t ldo);

}  // namespace lineage::engine
