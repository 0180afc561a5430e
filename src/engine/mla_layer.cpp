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
#include "engine/layers.h"
#include "engine/lightning_indexer.h"
#include "engine/multi_gemm.h"
#include "engine/rope.h"

namespace lineage::engine {
namespace {

// Most query rows per attention task.
constexpr int64_t kMaxRowsPerTask = 16;
// Below this many rows a segment's heads are split across tasks instead.
constexpr int64_t kRowsForWholeHeads = 16;

struct LatentRun {
  const cache::PageTable* kv = nullptr;
  int64_t layer = 0;
  int64_t start_pos = 0;
  int64_t latent = 0;  // W = L + dr: the row; its first L values are c
  int64_t rank = 0;    // L
  float scale = 1.0f;
};

// The K and V halves of a page's first n latent rows as f32: the page's
// own rows when it stores f32, else widened into `widened` (2 P half floats).
std::pair<const float*, const float*> PageLatentHalves(const LatentRun& run, const cache::KvPage& page, int64_t n,
                                                       float* widened) {
  const cache::KvLayout& layout = run.kv->layout();
  if (layout.dtype == DType::kF32)
    return {static_cast<const float*>(page.k(run.layer, 0)), static_cast<const float*>(page.v(run.layer, 0))};
  const int64_t half_block = layout.page_tokens * (run.latent / 2);
  page.ReadRows(run.layer, 0, false, n, widened);
  page.ReadRows(run.layer, 0, true, n, widened + half_block);
  return {widened, widened + half_block};
}

// Rows [row0, row1) of heads [h0, h1) (q_lat of head h at q + h W, row
// stride ldq): each page's latent rows are put back together ([K half | V
// half]) in a buffer and fed to a kernels::AttentionTile whose keys and
// values are both the row, every head of the block a query of the one
// latent "kv head". The first L values of each head's output (stride ldo,
// W per head) are the attended c. REQUIRES: W a multiple of 16.
void AttendLatentTiled(const LatentRun& run, int64_t row0, int64_t row1, int64_t h0, int64_t h1, const float* q,
                       int64_t ldq, float* out, int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t P = layout.page_tokens, W = run.latent, half = W / 2;
  kernels::AttentionQueries queries;
  queries.q = q + row0 * ldq + h0 * W;
  queries.ldq = ldq;
  queries.out = out + row0 * ldo + h0 * W;
  queries.ldo = ldo;
  queries.num_rows = row1 - row0;
  queries.group = h1 - h0;
  queries.head_dim = W;
  queries.first_pos = run.start_pos + row0;
  queries.scale = run.scale;
  thread_local kernels::AttentionTile tile;
  thread_local std::vector<float> rows, widened;
  rows.resize(static_cast<size_t>(P * W));
  widened.resize(static_cast<size_t>(2 * P * half));
  tile.Begin(queries);
  const int64_t num_keys = tile.last_key() + 1;
  for (int64_t p = 0; p * P < num_keys; ++p) {
    const cache::KvPage& page = run.kv->page(p);
    const int64_t n = std::min(P, num_keys - p * P);
    auto [kr, vr] = PageLatentHalves(run, page, n, widened.data());
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(rows.data() + j * W, kr + j * half, static_cast<size_t>(half) * 4);
      std::memcpy(rows.data() + j * W + half, vr + j * half, static_cast<size_t>(half) * 4);
    }
    tile.AddKeys(p * P, n, rows.data(), rows.data(), DType::kF32);
  }
  tile.Finish();
}

// Rows [row0, row1) of one head: q_lat rows at q (stride ldq, W values
// each), the attended latent c (L values) to out (stride ldo). Online
// softmax a page at a time, a dot product per key: the form for latent
// widths the tile does not take (not a multiple of 16).
void AttendLatent(const LatentRun& run, int64_t row0, int64_t row1, const float* q, int64_t ldq, float* out,
                  int64_t ldo) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t P = layout.page_tokens, half = run.latent / 2, L = run.rank, rows = row1 - row0;
  thread_local std::vector<float> acc, mx, sum, scores, widened;
  acc.assign(static_cast<size_t>(rows * L), 0.0f);
  mx.assign(static_cast<size_t>(rows), -INFINITY);
  sum.assign(static_cast<size_t>(rows), 0.0f);
  scores.resize(static_cast<size_t>(P));
  widened.resize(static_cast<size_t>(2 * P * half));
  const int64_t max_keys = run.start_pos + row1;
  for (int64_t p = 0; p * P < max_keys; ++p) {
    const cache::KvPage& page = run.kv->page(p);
    const int64_t n = std::min(P, max_keys - p * P);
    auto [kr, vr] = PageLatentHalves(run, page, n, widened.data());
    for (int64_t t = std::max(row0, p * P - run.start_pos); t < row1; ++t) {
      const int64_t r = t - row0;
      const int64_t m = std::min(n, run.start_pos + t + 1 - p * P);  // keys of this page row t sees
      const float* qt = q + t * ldq;
      float page_max = -INFINITY;
      for (int64_t j = 0; j < m; ++j) {
        scores[j] = (kernels::Dot(qt, kr + j * half, half) + kernels::Dot(qt + half, vr + j * half, half)) * run.scale;
        page_max = std::max(page_max, scores[j]);
      }
      float* a = acc.data() + r * L;
      if (page_max > mx[r]) {
        const float rescale = std::exp(mx[r] - page_max);  // exp(-inf) = 0 on the first page
        kernels::Scale(a, rescale, L);
        sum[r] *= rescale;
        mx[r] = page_max;
      }
      for (int64_t j = 0; j < m; ++j) {
        const float wj = std::exp(scores[j] - mx[r]);
        sum[r] += wj;
        kernels::Axpy(wj, kr + j * half, a, half);           // c[0, half)
        kernels::Axpy(wj, vr + j * half, a + half, L - half);  // c[half, L)
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* o = out + (row0 + r) * ldo;
    std::memcpy(o, acc.data() + r * L, static_cast<size_t>(L) * 4);
    kernels::Scale(o, 1.0f / sum[r], L);
  }
}

// The latent rows of `keys` (ascending positions) gathered from the pages
// as f32 rows [n, W] into rows.
void GatherLatentRows(const LatentRun& run, const int32_t* keys, int64_t n, float* rows) {
  const cache::KvLayout& layout = run.kv->layout();
  const int64_t P = layout.page_tokens, W = run.latent, half = W / 2;
  for (int64_t i = 0; i < n; ++i) {
    const cache::KvPage& page = run.kv->page(keys[i] / P);
    const int64_t j = keys[i] % P;
    float* dst = rows + i * W;
    if (layout.dtype == DType::kF32) {
      std::memcpy(dst, static_cast<const float*>(page.k(run.layer, 0)) + j * half, static_cast<size_t>(half) * 4);
      std::memcpy(dst + half, static_cast<const float*>(page.v(run.layer, 0)) + j * half, static_cast<size_t>(half) * 4);
    } else {
      const auto* k = static_cast<const uint16_t*>(page.k(run.layer, 0)) + j * half;
      const auto* v = static_cast<const uint16_t*>(page.v(run.layer, 0)) + j * half;
      for (int64_t e = 0; e < half; ++e) {
        dst[e] = Bf16ToFloat(k[e]);
        dst[half + e] = Bf16ToFloat(v[e]);
      }
    }
  }
}

// One query row's heads [h0, h1) over its selected keys (the decode shape):
// the selected latent rows are gathered, then attended as one block of keys
// every query sees. q_lat of head h at q + h W; the attended row (c in its
// first L values) to out + h W.
void AttendSelected(const LatentRun& run, const int32_t* keys, int64_t n, int64_t h0, int64_t h1, const float* q,
                    float* out) {
  const int64_t W = run.latent, L = run.rank;
  thread_local std::vector<float> rows;
  rows.resize(static_cast<size_t>(n * W));
  GatherLatentRows(run, keys, n, rows.data());
  if (W % 16 == 0) {
    kernels::AttentionQueries queries;
    queries.q = q + h0 * W;
    queries.ldq = 0;
    queries.out = out + h0 * W;
    queries.ldo = 0;
    queries.num_rows = 1;
    queries.group = h1 - h0;
    queries.head_dim = W;
    queries.first_pos = n - 1;  // every gathered key is visible
    queries.scale = run.scale;
    thread_local kernels::AttentionTile tile;
    tile.Begin(queries);
    tile.AddKeys(0, n, rows.data(), rows.data(), DType::kF32);
    tile.Finish();
    return;
  }
  thread_local std::vector<float> scores;
  scores.resize(static_cast<size_t>(n));
  for (int64_t h = h0; h < h1; ++h) {
    const float* qh = q + h * W;
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, scores[i] = kernels::Dot(qh, rows.data() + i * W, W) * run.scale);
    float sum = 0;
    float* o = out + h * W;
    std::fill(o, o + L, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      const float p = std::exp(scores[i] - mx);
      sum += p;
      kernels::Axpy(p, rows.data() + i * W, o, L);
    }
    kernels::Scale(o, 1.0f / sum, L);
  }
}

}  // namespace

void LatentAttention(const model::MlaWeights& w, int64_t mla_index, int64_t index_layer, const StepContext& ctx,
                     const float* xn, float* out) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden, nh = c.num_heads;
  const int64_t dn = c.qk_nope_dim, dr = c.qk_rope_dim, dq = dn + dr, dv = c.v_head_dim, L = c.kv_lora_rank;
  const int64_t W = c.latent_dim(), half = W / 2;
  LatentScratch& ks = ctx.ws.latent;
  float* q = ctx.ws.wide0.data();   // [R, nh dq]
  float* lat = ks.lat.data();       // [R, W]
  float* q_lat = ks.q_lat.data();   // [R, nh W]
  float* att_lat = ks.ctx.data();   // [R, nh W]: per head the attended row, c in its first L
  float* att = ctx.ws.mid0.data();  // [R, nh dv]
  const std::vector<Segment>& segs = ctx.batch.segments;
  if (w.q_a.valid()) {  // q = q_b rmsnorm(q_a xn); the normed latent also feeds the indexer
    const int64_t ql = c.q_lora_rank;
    float* qr = ks.qr.data();
    MultiGemm({{&w.q_a, qr, ql}, {&w.kv_a, lat, W}}, xn, H, R, ctx.pool);
    kernels::RmsNorm(qr, w.q_a_norm.data(), static_cast<float>(c.rms_eps), R, ql, qr);
    kernels::Gemm(w.q_b, qr, ql, q, nh * dq, R, ctx.pool);
  } else {
    MultiGemm({{&w.q_proj, q, nh * dq}, {&w.kv_a, lat, W}}, xn, H, R, ctx.pool);
  }
  for (int64_t r = 0; r < R; ++r)
    kernels::RmsNorm(lat + r * W, w.kv_a_norm.data(), static_cast<float>(c.rms_eps), 1, L, lat + r * W);
  float* rope = ks.rope.data();  // [R, dr]: the positions' cos | sin
  if (c.latent_rope || w.indexer.valid()) {
    for (const Segment& s : segs) RopeTable(s.start_pos(), s.num_tokens, dr, c.rope_theta, rope + s.row_begin * dr);
  }
  if (c.latent_rope) {
    ApplyRopeInterleaved(q + dn, R, nh * dq, nh, dq, dr, rope);
    ApplyRopeInterleaved(lat + L, R, W, 1, W, dr, rope);
  }
  for (const Segment& s : segs)
    for (int64_t t = 0; t < s.num_tokens; ++t) {
      const float* row = lat + (s.row_begin + t) * W;
      s.seq->kv().WriteRow(mla_index, 0, s.start_pos() + t, row, row + half);
    }
  if (w.indexer.valid()) SelectKeys(w.indexer, index_layer, ctx, xn, ks.qr.data(), rope, &ks.selection);

  // q_lat,h = [W_k,h^T q_nope,h | q_pe,h]: one Gemm per head, heads across threads.
  ctx.pool->parallel_for(nh, [&](int64_t h0, int64_t h1, int) {
    for (int64_t h = h0; h < h1; ++h) {
      kernels::Gemm(w.k_b_t[h], q + h * dq, nh * dq, q_lat + h * W, nh * W, R, nullptr);
      for (int64_t r = 0; r < R; ++r)
        std::memcpy(q_lat + r * nh * W + h * W + L, q + r * nh * dq + h * dq + dn, static_cast<size_t>(dr) * 4);
    }
  });

  // Tasks: (segment, block of rows, block of heads). Long runs keep every
  // head in one task, so a page is put back together once per row block;
  // short ones (decode) split the heads so every thread has work. Sparse
  // layers attend one row per task over that row's selection.
  struct Task {
    int64_t seg, row0, row1, h0, h1;
  };
  const bool sparse = c.sparse();
  const bool tiled = W % 16 == 0;
  const int64_t threads = ctx.pool ? ctx.pool->size() : 1;
  const int64_t rows_per_task = sparse ? 1 : kMaxRowsPerTask;
  std::vector<Task> tasks;
  for (int64_t si = 0; si < static_cast<int64_t>(segs.size()); ++si) {
    const int64_t T = segs[si].num_tokens;
    int64_t head_blocks = 1;
    if (sparse) {
      if (R < 2 * threads) head_blocks = std::min<int64_t>(nh, (2 * threads + R - 1) / R);
    } else if (!tiled) {
      head_blocks = nh;
    } else if (T < kRowsForWholeHeads) {
      head_blocks = std::min<int64_t>(nh, (2 * threads + segs.size() - 1) / segs.size());
    }
    const int64_t heads_per = (nh + head_blocks - 1) / head_blocks;
    for (int64_t r0 = 0; r0 < T; r0 += rows_per_task)
      for (int64_t h0 = 0; h0 < nh; h0 += heads_per)
        tasks.push_back({si, r0, std::min(T, r0 + rows_per_task), h0, std::min(nh, h0 + heads_per)});
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(dq));
  const KeySelection& sel = ks.selection;
  ctx.pool->parallel_for(static_cast<int64_t>(tasks.size()), [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const Task& t = tasks[i];
      const Segment& s = segs[t.seg];
      const LatentRun run{&s.seq->kv(), mla_index, s.start_pos(), W, L, scale};
      const float* qs = q_lat + s.row_begin * nh * W;
      float* os = att_lat + s.row_begin * nh * W;
      if (sparse) {
        const int64_t row = s.row_begin + t.row0;
        AttendSelected(run, sel.keys.data() + row * sel.top_k, sel.count[row], t.h0, t.h1, q_lat + row * nh * W,
                       att_lat + row * nh * W);
      } else if (tiled) {
        AttendLatentTiled(run, t.row0, t.row1, t.h0, t.h1, qs, nh * W, os, nh * W);
      } else {
        for (int64_t h = t.h0; h < t.h1; ++h) AttendLatent(run, t.row0, t.row1, qs + h * W, nh * W, os + h * W, nh * W);
      }
    }
  });

  // out_h = W_v,h a_h, then o_proj.
  ctx.pool->parallel_for(nh, [&](int64_t h0, int64_t h1, int) {
    for (int64_t h = h0; h < h1; ++h)
      kernels::Gemm(w.v_b[h], att_lat + h * W, nh * W, att + h * dv, nh * dv, R, nullptr);
  });
  kernels::Gemm(w.o_proj, att, nh * dv, out, H, R, ctx.pool);
}

}  // namespace lineage::engine
