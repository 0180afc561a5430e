// The ways the latent-attention mixer (mla_layer.cpp) can attend a run of
// new rows of one sequence, and the cost model that picks one per run (the
// second finding of seeds/000: a latent layer must choose its path by chunk
// size). W = L + dr is the latent row [c | k_pe], nh the heads.
//
//   kAbsorbed     every row attends with absorbed queries q_lat,h = [W_k,h^T
//                 q_nope | q_pe] (W wide) directly over latent rows: dense,
//                 over all its cached rows, a block of rows sharing each page
//                 read; sparse, over its own selection, gathered row by row
//                 (the decode shape, batched over the run's rows). Costs
//                 per (row, key, head) 2 W multiply-adds.
//   kBlockGather  sparse: a block of rows gathers the union of their
//                 selections once and attends it with a per-row mask
//                 (shared gathers, masked work on keys a row did not pick).
//   kExpanded     the keys the run needs are expanded into per-head keys
//                 [W_k,h c | k_pe] (dq) and values W_v,h c (dv), a block at a
//                 time, and attended per head (causal, or masked to each
//                 row's selection): (dn + dv) L multiply-adds per (key, head)
//                 up front, then 2 max(dq, dv) per (row, key, head). It wins
//                 for long runs, where the expansion is shared by many rows.
//
// Every path gives the same attended output up to float rounding (the tests
// force each one against the reference). Thread-safety: the functions
// write only their output rows and thread-local scratch.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/kv_pages.h"
#include "core/tensor_view.h"
#include "kinds/sparse_latent_attention/engine/key_selection.h"

namespace lineage::engine {

enum class LatentPath { kAuto, kAbsorbed, kBlockGather, kExpanded };
const char* LatentPathName(LatentPath p);  // "auto", "absorbed", "block-gather", "expanded"

// One run's place in the pages: rows at positions start_pos + t.
struct LatentRun {
  const cache::PageTable* kv = nullptr;
  int64_t layer = 0;      // MLA layer index in the page layout
  int64_t start_pos = 0;
  int64_t latent = 0;     // W = L + dr: the row; its first L values are c
  int64_t rank = 0;       // L
  float scale = 1.0f;     // 1 / sqrt(dn + dr)
};

// kAbsorbed, dense: rows [row0, row1) of heads [h0, h1) (q_lat of head h at
// q + t ldq + h W) over every cached row up to each row's position; the
// attended row of head h (c in its first L values) to out + t ldo + h W.
// Any W (a dot-product form where W is not a multiple of 16).
void AttendLatentRows(const LatentRun& run, int64_t row0, int64_t row1, int64_t h0, int64_t h1, const float* q,
                      int64_t ldq, float* out, int64_t ldo);

// kAbsorbed, sparse: one row's heads [h0, h1) over its n selected keys
// (ascending positions); q and out point at the row (head h at + h W).
void AttendSelected(const LatentRun& run, const int32_t* keys, int64_t n, int64_t h0, int64_t h1, const float* q,
                    float* out);

// kAbsorbed, sparse, a part of one row's selection (a decode row's keys
// split over the threads): every head of the row over its n keys, each
// head's unnormalised output (W) to out + h W with its running max and sum
// (AttentionTile::FinishPart; merged by kernels::MergeAttentionParts).
// REQUIRES: W a multiple of 16.
void AttendSelectedPart(const LatentRun& run, const int32_t* keys, int64_t n, int64_t heads, const float* q,
                        float* out, float* max, float* sum);

// kBlockGather: rows [row0, row1) of the run (selection rows sel_row0 + t
// of `sel`) over the union of their selections, masked per row; layout of
// q and out as AttendLatentRows. REQUIRES: W a multiple of 16.
void AttendSelectedBlock(const LatentRun& run, const KeySelection& sel, int64_t sel_row0, int64_t row0, int64_t row1,
                         int64_t h0, int64_t h1, const float* q, int64_t ldq, float* out, int64_t ldo);

// The latent rows at `keys` as f32 rows [n, W].
void GatherLatentRows(const LatentRun& run, const int32_t* keys, int64_t n, float* rows);

// kExpanded: what one run shares across its heads, built before the head
// tasks: the keys it needs (dense: [0, start + T); sparse: the union of its
// rows' selections), their latent rows, and (sparse) which row sees which.
struct ExpandedKeys {
  std::vector<int32_t> keys;     // ascending positions
  std::vector<float> rows;       // [keys, W]
  std::vector<uint8_t> visible;  // sparse: [keys, T]; empty when dense (causal)
};
void PrepareExpandedKeys(const LatentRun& run, int64_t num_rows, const KeySelection* sel, int64_t sel_row0,
                         ExpandedKeys* out);

// kExpanded, one head h: the run's T rows of un-absorbed queries q (row t,
// head h at q + t ldq + h dq, rotary dims rotated) over the expanded keys,
// the output (dv values) to out + t ldo + h dv. wk_h: W_k,h [dn, L] f32
// row-major; v_b_h: W_v,h [dv, L].
struct LatentHeadWidths {
  int64_t dn = 0, dr = 0, dv = 0;
};
void AttendExpandedHead(const LatentRun& run, const ExpandedKeys& keys, int64_t num_rows, const LatentHeadWidths& w,
                        const float* wk_h, const TensorView& v_b_h, int64_t h, const float* q, int64_t ldq,
                        float* out, int64_t ldo);

// The modelled seconds of each path for one run, from multiply-add and
// byte counts times this CPU's rates (measured once per process, a few
// milliseconds: the attention tile's multiply-adds, a Gemm's, a copy's
// bytes). `sel` is null for dense attention. kAuto picks the cheapest;
// block gather and expansion need W a multiple of 16 and T > 1.
struct LatentShape {
  int64_t heads = 0, latent = 0, rank = 0, dn = 0, dr = 0, dv = 0;
};
struct LatentCosts {
  double absorbed = 0, block_gather = -1, expanded = -1;  // seconds; -1: not available
};
LatentCosts EstimateLatentCosts(const LatentShape& shape, int64_t start_pos, int64_t num_rows,
                                const KeySelection* sel, int64_t sel_row0);
LatentPath ChooseLatentPath(const LatentCosts& costs);

// Rows per block of the block-gather path.
constexpr int64_t kBlockGatherRows = 16;

}  // namespace lineage::engine
