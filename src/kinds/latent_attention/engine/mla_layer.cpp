// Latent attention mixer (MLA; spec §7.3, latent-attention §1.1, §1.5) in
// the absorbed form, for every segment of a batch:
//   q          = q_proj xn, or q_b rmsnorm(q_a xn)   per head [q_nope (dn) | q_pe (dr)]
//   [c | k_pe] = kv_a xn;  c = rmsnorm(c) * kv_a_norm      the latent row, W = L + dr
//   q_pe, k_pe rotated (interleaved pairs) unless NoPE (Kimi)
//   latent row -> the sequence's pages (docs/engine.md: K half | V half)
//   sparse: the lightning indexer picks each row's keys (lightning_indexer.h)
//   q_lat,h    = [W_k,h^T q_nope,h | q_pe,h]     W_k absorbed into the query
//   a_h        = softmax_j(q_lat,h . row_j / sqrt(dn + dr)) . c_j   over the latent rows
//                (kernels::AttentionTile: the rows are the keys and the values);
//                sparse: over the row's selected keys only, gathered from the pages
//   out        = o_proj [W_v,h a_h]_h            W_v applied after attention
// No step expands the cached latent rows into per-head keys or values: a
// query costs W multiply-adds per cached (or selected) row and head,
// whatever the chunk.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/attention_tile.h"
#include "core/kernels.h"
#include "kinds/latent_attention/engine/latent_paths.h"
#include "engine/layers.h"
#include "kinds/sparse_latent_attention/engine/lightning_indexer.h"
#include "engine/multi_gemm.h"
#include "engine/rope.h"

namespace lineage::engine {
namespace {

// Most query rows per attention task.
constexpr int64_t kMaxRowsPerTask = 16;
// Below this many rows a segment's heads are split across tasks instead.
constexpr int64_t kRowsForWholeHeads = 16;

// W_k,h [dn, L] row-major for every head of MLA layer `mla_index` (the
// expanded path's key weights), built from k_b_t = W_k,h^T at first use and
// kept in the workspace.
const std::vector<float>& ExpandKeyWeights(const model::MlaWeights& w, int64_t mla_index, const model::ModelConfig& c,
                                           LatentScratch& ks) {
  if (static_cast<int64_t>(ks.expand_wk.size()) <= mla_index) ks.expand_wk.resize(static_cast<size_t>(mla_index + 1));
  std::vector<float>& wk = ks.expand_wk[mla_index];
  const int64_t nh = c.num_heads, dn = c.mla.qk_nope_dim, L = c.mla.kv_lora_rank;
  if (!wk.empty()) return wk;
  wk.resize(static_cast<size_t>(nh * dn * L));
  std::vector<float> row(static_cast<size_t>(dn));
  for (int64_t h = 0; h < nh; ++h)
    for (int64_t l = 0; l < L; ++l) {
      DecodeToFloat(w.k_b_t[h], l * dn, dn, row.data());
      for (int64_t j = 0; j < dn; ++j) wk[(h * dn + j) * L + l] = row[j];
    }
  return wk;
}

}  // namespace

// lat [R, W] = kv_a xn as projected: c_kv normed, k_pe rotated at its
// position, the rows written to the pages; ctx.ws.latent.rope keeps each
// row's table (also where only the indexer rotates).
void StoreLatentRows(const model::MlaWeights& w, int64_t mla_index, const StepContext& ctx, float* lat) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, L = c.mla.kv_lora_rank, dr = c.mla.qk_rope_dim, W = c.mla.latent_dim(), half = W / 2;
  for (int64_t r = 0; r < R; ++r)
    kernels::RmsNorm(lat + r * W, w.kv_a_norm.data(), static_cast<float>(c.rms_eps), 1, L, lat + r * W);
  float* rope = ctx.ws.latent.rope.data();
  if (c.mla.rope || w.indexer.valid()) {
    const Yarn yarn = LatentYarn(c);
    for (const Segment& s : ctx.batch.segments)
      RopeTable(s.start_pos(), s.num_tokens, dr, c.rope_theta, rope + s.row_begin * dr, yarn);
  }
  if (c.mla.rope) ApplyRopeInterleaved(lat + L, R, W, 1, W, dr, rope);
  for (const Segment& s : ctx.batch.segments)
    for (int64_t t = 0; t < s.num_tokens; ++t) {
      const float* row = lat + (s.row_begin + t) * W;
      s.seq->kv().WriteRow(mla_index, 0, s.start_pos() + t, row, row + half);
    }
}

void WriteLatentKv(const model::MlaWeights& w, int64_t mla_index, const StepContext& ctx, const float* xn) {
  float* lat = ctx.ws.latent.lat.data();
  kernels::Gemm(w.kv_a, xn, ctx.config.hidden, lat, ctx.config.mla.latent_dim(), ctx.batch.num_rows, ctx.pool);
  StoreLatentRows(w, mla_index, ctx, lat);
}

void LatentAttention(const model::MlaWeights& w, int64_t mla_index, int64_t index_layer, bool sparse,
                     const StepContext& ctx, const float* xn, float* out) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden, nh = c.num_heads;
  const int64_t dn = c.mla.qk_nope_dim, dr = c.mla.qk_rope_dim, dq = dn + dr, dv = c.mla.v_head_dim, L = c.mla.kv_lora_rank;
  const int64_t W = c.mla.latent_dim();
  LatentScratch& ks = ctx.ws.latent;
  float* q = ctx.ws.wide0.data();   // [R, nh dq]
  float* lat = ks.lat.data();       // [R, W]
  float* q_lat = ks.q_lat.data();   // [R, nh W]
  float* att_lat = ks.ctx.data();   // [R, nh W]: per head the attended row, c in its first L
  float* att = ctx.ws.mid0.data();  // [R, nh dv]
  const std::vector<Segment>& segs = ctx.batch.segments;
  if (w.q_a.valid()) {  // q = q_b rmsnorm(q_a xn); the normed latent also feeds the indexer
    const int64_t ql = c.mla.q_lora_rank;
    float* qr = ks.qr.data();
    MultiGemm({{&w.q_a, qr, ql}, {&w.kv_a, lat, W}}, xn, H, R, ctx.pool);
    kernels::RmsNorm(qr, w.q_a_norm.data(), static_cast<float>(c.rms_eps), R, ql, qr);
    kernels::Gemm(w.q_b, qr, ql, q, nh * dq, R, ctx.pool);
  } else {
    MultiGemm({{&w.q_proj, q, nh * dq}, {&w.kv_a, lat, W}}, xn, H, R, ctx.pool);
  }
  StoreLatentRows(w, mla_index, ctx, lat);
  float* rope = ks.rope.data();  // [R, dr]: the positions' cos | sin
  if (c.mla.rope) ApplyRopeInterleaved(q + dn, R, nh * dq, nh, dq, dr, rope);
  if (w.indexer.valid()) SelectKeys(w.indexer, index_layer, ctx, xn, ks.qr.data(), rope, &ks.indexer.selection);

  // The path of each segment: by the cost model, unless the options force
  // one (the benchmark and the tests). Decode rows are always absorbed.
  const LatentShape shape{nh, W, L, dn, dr, dv};
  const KeySelection* sel = sparse ? &ks.indexer.selection : nullptr;
  std::vector<LatentPath> path(segs.size(), LatentPath::kAbsorbed);
  bool any_absorbed = false, any_expanded = false;
  for (size_t si = 0; si < segs.size(); ++si) {
    const Segment& s = segs[si];
    if (s.num_tokens > 1 && W % 16 == 0 && !s.rows_as_decode) {
      path[si] = ctx.latent_path != LatentPath::kAuto
                     ? ctx.latent_path
                     : ChooseLatentPath(EstimateLatentCosts(shape, s.start_pos(), s.num_tokens, sel, s.row_begin));
      if (path[si] == LatentPath::kBlockGather && !sparse) path[si] = LatentPath::kAbsorbed;
    }
    any_absorbed = any_absorbed || path[si] != LatentPath::kExpanded;
    any_expanded = any_expanded || path[si] == LatentPath::kExpanded;
  }

  // q_lat,h = [W_k,h^T q_nope,h | q_pe,h]: one Gemm per head, heads across threads.
  if (any_absorbed) {
    ctx.pool->parallel_for(nh, [&](int64_t h0, int64_t h1, int) {
      for (int64_t h = h0; h < h1; ++h) {
        kernels::Gemm(w.k_b_t[h], q + h * dq, nh * dq, q_lat + h * W, nh * W, R, nullptr);
        for (int64_t r = 0; r < R; ++r)
          std::memcpy(q_lat + r * nh * W + h * W + L, q + r * nh * dq + h * dq + dn, static_cast<size_t>(dr) * 4);
      }
    });
  }
  const std::vector<float>* wk = any_expanded ? &ExpandKeyWeights(w, mla_index, c, ks) : nullptr;
  std::vector<ExpandedKeys>& expanded = ks.expanded;
  expanded.resize(segs.size());
  const float scale = static_cast<float>(c.mla.scale());  // mscale^2 / sqrt(dq) under YaRN
  for (size_t si = 0; si < segs.size(); ++si) {
    if (path[si] != LatentPath::kExpanded) continue;
    const Segment& s = segs[si];
    PrepareExpandedKeys({&s.seq->kv(), mla_index, s.start_pos(), W, L, scale}, s.num_tokens, sel, s.row_begin,
                        &expanded[si]);
  }

  // Tasks: (segment, block of rows, block of heads). Absorbed dense runs
  // keep every head of a block of rows in one task, so a page is put back
  // together once per row block; absorbed sparse rows take a task each over
  // their own selection; block gathers a block of rows; expanded runs a
  // task per head. Short runs (decode) split the heads so every thread has
  // work.
  struct Task {
    int64_t seg, row0, row1, h0, h1;
    int64_t part = -1;  // sparse rows split by keys: which part of the row's selection
  };
  const int64_t threads = ctx.pool ? ctx.pool->size() : 1;
  // Sparse decode: a row's selection split into parts of at least this many
  // keys, one task each (no head split: each key is gathered once).
  constexpr int64_t kMinPartKeys = 256;
  // Rows verified as decode rows split as one decode row alone would.
  const bool as_decode = std::all_of(segs.begin(), segs.end(), [](const Segment& s) { return s.rows_as_decode; });
  const int64_t R_split = as_decode ? 1 : R;
  int64_t parts = 1;
  if (sparse && W % 16 == 0 && R_split < 2 * threads)
    parts = std::max<int64_t>(1, std::min((2 * threads + R_split - 1) / R_split, c.indexer.top_k / kMinPartKeys));
  std::vector<Task> tasks;
  for (int64_t si = 0; si < static_cast<int64_t>(segs.size()); ++si) {
    const int64_t T = segs[si].num_tokens;
    int64_t rows_per_task = kMaxRowsPerTask, head_blocks = 1;
    switch (path[si]) {
      case LatentPath::kExpanded:
        rows_per_task = T, head_blocks = nh;
        break;
      case LatentPath::kBlockGather:
        rows_per_task = kBlockGatherRows;
        break;
      default:
        if (sparse) {
          rows_per_task = 1;
          if (parts == 1 && R < 2 * threads) head_blocks = std::min<int64_t>(nh, (2 * threads + R - 1) / R);
        } else if (W % 16 != 0) {
          head_blocks = nh;
        } else if (T < kRowsForWholeHeads) {
          head_blocks = std::min<int64_t>(nh, (2 * threads + segs.size() - 1) / segs.size());
        }
    }
    const int64_t heads_per = (nh + head_blocks - 1) / head_blocks;
    const bool split = sparse && path[si] == LatentPath::kAbsorbed && parts > 1;
    for (int64_t r0 = 0; r0 < T; r0 += rows_per_task)
      for (int64_t h0 = 0; h0 < nh; h0 += heads_per)
        for (int64_t part = 0; part < (split ? parts : 1); ++part)
          tasks.push_back({si, r0, std::min(T, r0 + rows_per_task), h0, std::min(nh, h0 + heads_per), split ? part : -1});
  }
  // The parts' unnormalised outputs [R, parts, nh W] and statistics [R, parts, nh].
  std::vector<float>& part_out = ks.part_out;
  std::vector<float>& part_stats = ks.part_stats;
  if (parts > 1) {
    part_out.resize(static_cast<size_t>(R * parts * nh * W));
    part_stats.resize(static_cast<size_t>(2 * R * parts * nh));
  }
  const LatentHeadWidths widths{dn, dr, dv};
  ctx.pool->parallel_for(static_cast<int64_t>(tasks.size()), [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const Task& t = tasks[i];
      const Segment& s = segs[t.seg];
      const LatentRun run{&s.seq->kv(), mla_index, s.start_pos(), W, L, scale};
      const float* qs = q_lat + s.row_begin * nh * W;
      float* os = att_lat + s.row_begin * nh * W;
      switch (path[t.seg]) {
        case LatentPath::kExpanded:
          for (int64_t h = t.h0; h < t.h1; ++h)
            AttendExpandedHead(run, expanded[t.seg], s.num_tokens, widths, wk->data() + h * dn * L, w.v_b[h], h,
                               q + s.row_begin * nh * dq, nh * dq, att + s.row_begin * nh * dv, nh * dv);
          break;
        case LatentPath::kBlockGather:
          AttendSelectedBlock(run, *sel, s.row_begin, t.row0, t.row1, t.h0, t.h1, qs, nh * W, os, nh * W);
          break;
        default:
          if (sparse) {
            const int64_t row = s.row_begin + t.row0;
            const int32_t* keys = sel->keys.data() + row * sel->top_k;
            const int64_t n = sel->count[row];
            if (t.part >= 0) {
              const int64_t k0 = n * t.part / parts, k1 = n * (t.part + 1) / parts;
              const int64_t slot = row * parts + t.part;
              AttendSelectedPart(run, keys + k0, k1 - k0, nh, q_lat + row * nh * W, &part_out[slot * nh * W],
                                 &part_stats[2 * slot * nh], &part_stats[(2 * slot + 1) * nh]);
            } else {
              AttendSelected(run, keys, n, t.h0, t.h1, q_lat + row * nh * W, att_lat + row * nh * W);
            }
          } else {
            AttendLatentRows(run, t.row0, t.row1, t.h0, t.h1, qs, nh * W, os, nh * W);
          }
      }
    }
  });
  if (parts > 1) {  // merge each (row, head) of the split rows' parts
    for (int64_t r = 0; r < R; ++r)
      for (int64_t h = 0; h < nh; ++h) {
        const int64_t slot0 = r * parts;
        kernels::MergeAttentionParts(parts, &part_out[slot0 * nh * W + h * W], nh * W,
                                     &part_stats[2 * slot0 * nh + h], &part_stats[(2 * slot0 + 1) * nh + h], 2 * nh, W,
                                     att_lat + r * nh * W + h * W);
      }
  }

  // out_h = W_v,h a_h for the rows attended in the absorbed form (the
  // expanded path wrote its values already), then o_proj.
  auto apply_v = [&](int64_t row0, int64_t rows) {
    ctx.pool->parallel_for(nh, [&](int64_t h0, int64_t h1, int) {
      for (int64_t h = h0; h < h1; ++h)
        kernels::Gemm(w.v_b[h], att_lat + row0 * nh * W + h * W, nh * W, att + row0 * nh * dv + h * dv, nh * dv, rows,
                      nullptr);
    });
  };
  if (!any_expanded) {
    apply_v(0, R);
  } else {
    for (size_t si = 0; si < segs.size(); ++si)
      if (path[si] != LatentPath::kExpanded) apply_v(segs[si].row_begin, segs[si].num_tokens);
  }
  if (w.out_gate.valid()) {  // K3: u *= sigmoid(attn_gate xn), per element
    float* gate = ks.q_lat.data();  // free again: [R, nh dv] fits in [R, nh W]
    kernels::Gemm(w.out_gate, xn, H, gate, nh * dv, R, ctx.pool);
    kernels::Sigmoid(gate, gate, R * nh * dv);
    for (int64_t i = 0; i < R * nh * dv; ++i) att[i] *= gate[i];
  }
  kernels::Gemm(w.o_proj, att, nh * dv, out, H, R, ctx.pool);
}

}  // namespace lineage::engine
