// Sparse MoE feed-forward (spec §4.3; Kimi's DeepSeek-V3 routing, §7.4, when
// the weights carry a score bias) for every row of a batch:
//   p     = softmax(router xn)              over all E experts
//   top-k of p, renormalised to sum to 1    (ties to the lower expert id)
//   out   = sigmoid(xn . shared_gate_inp) * Shared(xn) + sum_k w_k Expert_k(xn)
//
// Rows are grouped by expert (a counting sort of the routes), so an
// expert's weights are read once per step for all the rows routed to it,
// and an expert no row chose is not touched. Prefill chunks and batched
// decode of sequences that chose different experts take the same path.
// Work is two pool passes: gate|up of every active expert and of the shared
// expert, cut into row blocks of about equal bytes; then down the same way.
// Every block is one kernels::Gemm on its own thread (pool = null), the
// threads claiming blocks as they finish. With one row the first pass is one
// kernels::GemmMulti instead (every projection reads the same input).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "core/gemm_multi.h"
#include "core/kernels.h"
#include "core/tensor_slice.h"
#include "engine/layers.h"

namespace lineage::engine {
namespace {

// One Gemm of a row block of a weight: Y[:, r0 .. r0 + n) = X W[r0 .. r0 + n)^T.
struct GemmBlock {
  const TensorView* w;
  int64_t r0, n;
  const float* x;
  int64_t ldx;
  float* y;
  int64_t ldy;
  int64_t tokens;
};

// Cuts rows [0, rows) of `w` into blocks of `block_rows` and appends them.
void AddBlocks(const TensorView* w, int64_t block_rows, const float* x, int64_t ldx, float* y, int64_t ldy,
               int64_t tokens, std::vector<GemmBlock>* out) {
  const int64_t rows = w->rows();
  for (int64_t r0 = 0; r0 < rows; r0 += block_rows)
    out->push_back({w, r0, std::min(block_rows, rows - r0), x, ldx, y, ldy, tokens});
}

// Every thread claims the next unclaimed block until none is left, so a
// thread the OS deschedules, or one whose blocks are slower (another
// dtype), holds back at most the block it is in, not half the pass.
void RunBlocks(const std::vector<GemmBlock>& blocks, ThreadPool* pool) {
  auto run = [&](const GemmBlock& g) {
    const TensorView slice = RowSlice(*g.w, g.r0, g.n);
    kernels::Gemm(slice, g.x, g.ldx, g.y + g.r0, g.ldy, g.tokens, nullptr);
  };
  if (pool == nullptr || pool->size() == 1 || blocks.size() <= 1) {
    for (const GemmBlock& g : blocks) run(g);
    return;
  }
  std::atomic<size_t> next{0};
  pool->parallel_for(pool->size(), [&](int64_t, int64_t, int) {
    for (size_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks.size();) run(blocks[b]);
  });
}

// Rows per block: small enough that every thread gets several blocks of the
// pass, large enough (>= 16 rows) that a block amortises its call.
int64_t BlockRows(int64_t total_rows, int threads) {
  const int64_t target_blocks = 8 * std::max(1, threads);
  return std::max<int64_t>(16, (total_rows + target_blocks - 1) / target_blocks);
}

// DeepSeek-V3 routing (spec §7.4; latent-attention §1.7) of R rows of router
// logits (overwritten by their sigmoid, in fp32): with expert groups, only
// the experts of the experts.groups_used groups whose two best sigmoid +
// score_bias sum highest are eligible; the top k eligible of sigmoid +
// score_bias (lowest id on ties); weights sigmoid, divided by their sum
// (clamped at 6.1035e-5, as llama.cpp) when experts.renormalise, times
// experts.routed_scaling.
void RouteDeepSeek(const model::MoeWeights& w, const model::ModelConfig& c, int64_t R, float* logits,
                   MoeScratch* m) {
  const int64_t E = c.experts.count, k = c.experts.per_token, G = c.experts.groups, per_group = E / G;
  thread_local std::vector<char> taken;
  thread_local std::vector<float> group_score;
  taken.resize(static_cast<size_t>(E));
  group_score.resize(static_cast<size_t>(G));
  for (int64_t r = 0; r < R; ++r) {
    float* p = logits + r * E;
    kernels::Sigmoid(p, p, E);
    std::fill(taken.begin(), taken.end(), 0);
    if (G > 1) {  // groups outside the best experts.groups_used are taken from the start
      for (int64_t g = 0; g < G; ++g) {
        float best = -INFINITY, second = -INFINITY;
        for (int64_t e = g * per_group; e < (g + 1) * per_group; ++e) {
          const float v = p[e] + w.score_bias[e];
          if (v > best) second = best, best = v;
          else if (v > second) second = v;
        }
        group_score[g] = best + (per_group > 1 ? second : 0.0f);
      }
      for (int64_t g = 0; g < G; ++g) {
        int64_t better = 0;  // groups ahead of g (a lower id wins a tie)
        for (int64_t o = 0; o < G; ++o)
          better += group_score[o] > group_score[g] || (group_score[o] == group_score[g] && o < g);
        if (better >= c.experts.groups_used) std::fill_n(taken.begin() + g * per_group, per_group, 1);
      }
    }
    int32_t* chosen = m->route_expert.data() + r * k;
    float* weight = m->route_weight.data() + r * k;
    float sum = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      int64_t best = -1;
      for (int64_t e = 0; e < E; ++e) {
        if (taken[e]) continue;
        if (best < 0 || p[e] + w.score_bias[e] > p[best] + w.score_bias[best]) best = e;
      }
      taken[best] = 1;
      chosen[j] = static_cast<int32_t>(best);
      weight[j] = p[best];
      sum += p[best];
      ++m->count[best];
    }
    const float scale =
        static_cast<float>(c.experts.routed_scaling) / (c.experts.renormalise ? std::max(sum, 6.1035e-5f) : 1.0f);
    for (int64_t j = 0; j < k; ++j) weight[j] *= scale;
  }
}

}  // namespace

void MoeFeedForward(const model::MoeWeights& w, const StepContext& ctx, const float* xn, float* out) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden, E = c.experts.count, k = c.experts.per_token;
  const int64_t Ie = c.experts.width, Is = c.experts.shared_width;
  MoeScratch& m = ctx.ws.moe;
  const int threads = ctx.pool ? ctx.pool->size() : 1;

  // Routing.
  float* logits = m.logits.data();  // [R, E]
  kernels::Gemm(w.router, xn, H, logits, E, R, ctx.pool);
  std::fill(m.count.begin(), m.count.end(), 0);
  if (!w.score_bias.empty()) {
    RouteDeepSeek(w, c, R, logits, &m);
  } else {
  for (int64_t r = 0; r < R; ++r) {
    float* p = logits + r * E;
    kernels::Softmax(p, E);
    int32_t* chosen = m.route_expert.data() + r * k;
    float* weight = m.route_weight.data() + r * k;
    float sum = 0;
    for (int64_t j = 0; j < k; ++j) {  // k is small: repeated argmax, lowest id on ties
      int64_t best = -1;
      for (int64_t e = 0; e < E; ++e) {
        if (p[e] < 0) continue;  // taken
        if (best < 0 || p[e] > p[best]) best = e;
      }
      chosen[j] = static_cast<int32_t>(best);
      weight[j] = p[best];
      sum += p[best];
      p[best] = -1.0f;
      ++m.count[best];
    }
    for (int64_t j = 0; j < k; ++j) weight[j] /= sum;
  }
  }

  ++m.layer_passes;
  for (int64_t e = 0; e < E; ++e) m.experts_run += m.count[e] > 0;

  // K3's latent MoE: the routed experts read z = latent_down xn, X wide
  // (spec latent-attention §2.3); the router and the shared expert read xn.
  const bool latent = w.latent_down.valid();
  const int64_t X = latent ? c.experts.latent : H;
  const float* xr = xn;  // [R, X]: the routed experts' input
  if (latent) {
    kernels::Gemm(w.latent_down, xn, H, m.latent_in.data(), X, R, ctx.pool);
    xr = m.latent_in.data();
  }

  // Group routes by expert: expert e owns slots [offset[e], offset[e] + count[e]).
  int64_t next = 0;
  for (int64_t e = 0; e < E; ++e) {
    m.offset[e] = next;
    next += m.count[e];
  }
  std::vector<int64_t>& fill = m.cursor;
  std::copy(m.offset.begin(), m.offset.end(), fill.begin());
  float* xs = m.xs.data();  // [R k, X] gathered inputs, slot order
  for (int64_t r = 0; r < R; ++r)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t slot = fill[m.route_expert[r * k + j]]++;
      m.slot_of_route[r * k + j] = slot;
      std::memcpy(xs + slot * X, xr + r * X, static_cast<size_t>(X) * 4);
    }

  // Pass 1: gate and up of the shared expert and of every routed expert chosen.
  float* gate = m.gate.data();  // [R k, Ie] routed | [R, Is] shared after them
  float* up = m.up.data();
  float* sh_gate = gate + R * k * Ie;
  float* sh_up = up + R * k * Ie;
  thread_local std::vector<GemmBlock> blocks;
  blocks.clear();
  if (R == 1) {
    // One row (decode of one sequence): every projection of the pass reads
    // the same xn, so they go as one GemmMulti: the activations are
    // quantised once, not once per block, and the threads stream the
    // weights in chunks of equal bytes. (A latent MoE's experts read z:
    // a GemmMulti of their own.)
    thread_local std::vector<kernels::GemmTarget> targets;
    targets.clear();
    targets.push_back({&w.shared_gate, sh_gate, Is});
    targets.push_back({&w.shared_up, sh_up, Is});
    if (latent) {
      kernels::GemmMulti(targets, xn, H, 1, ctx.pool);
      targets.clear();
    }
    for (int64_t e = 0; e < E; ++e) {
      if (m.count[e] == 0) continue;
      targets.push_back({&w.gate[e], gate + m.offset[e] * Ie, Ie});
      targets.push_back({&w.up[e], up + m.offset[e] * Ie, Ie});
    }
    kernels::GemmMulti(targets, xr, X, 1, ctx.pool);
  } else {
    int64_t active_rows = Is;
    for (int64_t e = 0; e < E; ++e) active_rows += m.count[e] > 0 ? Ie : 0;
    const int64_t rows1 = BlockRows(2 * active_rows, threads);
    AddBlocks(&w.shared_gate, rows1, xn, H, sh_gate, Is, R, &blocks);
    AddBlocks(&w.shared_up, rows1, xn, H, sh_up, Is, R, &blocks);
    for (int64_t e = 0; e < E; ++e) {
      if (m.count[e] == 0) continue;
      const float* x = xs + m.offset[e] * X;
      AddBlocks(&w.gate[e], rows1, x, X, gate + m.offset[e] * Ie, Ie, m.count[e], &blocks);
      AddBlocks(&w.up[e], rows1, x, X, up + m.offset[e] * Ie, Ie, m.count[e], &blocks);
    }
    RunBlocks(blocks, ctx.pool);
  }
  GatedActivation(c, gate, up, R * k * Ie);
  GatedActivation(c, sh_gate, sh_up, R * Is);

  // Pass 2: down projections; the shared expert writes `out` directly.
  float* ys = m.ys.data();  // [R k, X], slot order
  blocks.clear();
  int64_t active = 1;
  for (int64_t e = 0; e < E; ++e) active += m.count[e] > 0;
  const int64_t rows2 = BlockRows(active * X, threads);
  AddBlocks(&w.shared_down, rows2, sh_gate, Is, out, H, R, &blocks);
  for (int64_t e = 0; e < E; ++e) {
    if (m.count[e] == 0) continue;
    AddBlocks(&w.down[e], rows2, gate + m.offset[e] * Ie, Ie, ys + m.offset[e] * X, X, m.count[e], &blocks);
  }
  RunBlocks(blocks, ctx.pool);

  // Combine: out = sigmoid(xn . shared_gate_inp) out + sum_k w_k ys[slot];
  // a latent MoE sums in its latent, then out += latent_up(rmsnorm(sum)).
  float* sum = latent ? m.latent_in.data() : nullptr;  // z is spent: [R, X]
  for (int64_t r = 0; r < R; ++r) {
    if (!w.shared_gate_inp.empty()) {
      const float s = kernels::Dot(xn + r * H, w.shared_gate_inp.data(), H);
      kernels::Scale(out + r * H, 1.0f / (1.0f + std::exp(-s)), H);
    }
    float* o = latent ? sum + r * X : out + r * H;
    if (latent) std::fill(o, o + X, 0.0f);
    for (int64_t j = 0; j < k; ++j)
      kernels::Axpy(m.route_weight[r * k + j], ys + m.slot_of_route[r * k + j] * X, o, X);
  }
  if (latent) {
    if (!w.latent_norm.empty())
      kernels::RmsNorm(sum, w.latent_norm.data(), static_cast<float>(c.rms_eps), R, X, sum);
    float* up_out = m.latent_out.data();  // [R, H]
    kernels::Gemm(w.latent_up, sum, X, up_out, H, R, ctx.pool);
    kernels::Add(out, up_out, out, R * H);
  }
}

}  // namespace lineage::engine
