// Gated DeltaNet mixer (spec §2), for every segment of a batch:
//   mixed = in_proj_qkv xn            [R, conv_dim]  raw q | k | v
//   y     = silu(causal_conv(mixed))  with the sequence's conv window
//   q, k  = l2norm per head; q /= sqrt(d_k)
//   beta  = sigmoid(in_proj_b xn);  g = ssm_a * softplus(in_proj_a xn + dt_bias)
//   o     = delta rule per value head, from and into the sequence's state
//   out   = out_proj( rmsnorm_dv(o) * norm_w * silu(in_proj_z xn) )
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/gemm_multi.h"
#include "core/kernels.h"
#include "engine/recurrent_ops.h"
#include "engine/layers.h"
#include "engine/multi_gemm.h"

namespace lineage::engine {
void GatedDeltaNet(const model::LinearAttentionWeights& w, int64_t gdn_index, const StepContext& ctx,
                   const float* xn, float* out) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden;
  const int64_t Hk = c.delta.k_heads, Hv = c.delta.v_heads, dk = c.delta.k_dim, dv = c.delta.v_dim;
  const int64_t key_dim = Hk * dk, value_dim = Hv * dv, conv_dim = c.delta.conv_dim(), K = c.delta.conv_kernel;
  const float eps = static_cast<float>(c.rms_eps);

  float* mixed = ctx.ws.wide0.data();  // [R, conv_dim]
  float* conv = ctx.ws.wide1.data();   // [R, conv_dim]
  float* z = ctx.ws.mid0.data();       // [R, value_dim]
  float* core = ctx.ws.mid1.data();    // [R, value_dim]
  float* beta = ctx.ws.heads0.data();  // [R, H_v]
  float* g = ctx.ws.heads1.data();     // [R, H_v]
  if (w.in_blocks.empty()) {
    MultiGemm({{&w.in_proj_qkv, mixed, conv_dim}, {&w.in_proj_z, z, value_dim}, {&w.in_proj_b, beta, Hv},
               {&w.in_proj_a, g, Hv}},
              xn, H, R, ctx.pool);
  } else {  // fused projections (Qwen3-Next), cut into row blocks at load
    thread_local std::vector<kernels::GemmTarget> targets;
    targets.clear();
    for (const model::GdnInputBlock& b : w.in_blocks) {
      switch (b.input) {
        case model::GdnInput::kQkv: targets.push_back({&b.w, mixed + b.col, conv_dim}); break;
        case model::GdnInput::kZ: targets.push_back({&b.w, z + b.col, value_dim}); break;
        case model::GdnInput::kB: targets.push_back({&b.w, beta + b.col, Hv}); break;
        case model::GdnInput::kA: targets.push_back({&b.w, g + b.col, Hv}); break;
      }
    }
    kernels::GemmMulti(targets, xn, H, R, ctx.pool);
  }

  // Everything between the projections runs in one pool pass, one task
  // per (segment, key head): the conv of the head's q, k and v channels (v
  // of every value head reading that key head), q/k norms, beta and g, the
  // delta rule and the gated norm. Decode did each of these as its own
  // pass or on the calling thread alone; channels and heads are independent,
  // so the results are the same bit for bit.
  const std::vector<Segment>& segs = ctx.batch.segments;
  const int64_t ratio = Hv / Hk;
  const bool grouped = c.delta.v_head_order == model::VHeadOrder::kGrouped;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  // The conv channels of key head kh: its q and k, and v of every value
  // head reading it (one run when grouped).
  auto value_head = [&](int64_t kh, int64_t j) { return grouped ? kh * ratio + j : kh + j * Hk; };
  auto for_each_channel_run = [&](int64_t kh, auto&& fn) {
    fn(kh * dk, (kh + 1) * dk);
    fn(key_dim + kh * dk, key_dim + (kh + 1) * dk);
    if (grouped) {
      fn(2 * key_dim + kh * ratio * dv, 2 * key_dim + (kh + 1) * ratio * dv);
    } else {
      for (int64_t j = 0; j < ratio; ++j) fn(2 * key_dim + value_head(kh, j) * dv, 2 * key_dim + (value_head(kh, j) + 1) * dv);
    }
  };
  // A decode step finds a layer's conv taps and window out of cache (the
  // weights streamed since evicted them); a task asks for the next task's
  // ahead of its own delta rule, so they arrive while it runs.
  auto prefetch_conv = [&](int64_t i) {
    const Segment& s = segs[i / Hk];
    const float* window = s.seq->recurrent().conv(gdn_index);
    for_each_channel_run(i % Hk, [&](int64_t c0, int64_t c1) {
      for (int64_t b = c0 * K * 4; b < c1 * K * 4; b += 64)
        _mm_prefetch(reinterpret_cast<const char*>(w.conv.data()) + b, _MM_HINT_T0);
      for (int64_t j = 0; j + 1 < K; ++j)
        for (int64_t b = c0 * 4; b < c1 * 4; b += 64)
          _mm_prefetch(reinterpret_cast<const char*>(window + j * conv_dim) + b, _MM_HINT_T0);
    });
  };
  CaptureConvWindows(K, conv_dim, gdn_index, ctx, mixed);
  LogRawRows(conv_dim, gdn_index, ctx, mixed);
  ctx.pool->parallel_for(static_cast<int64_t>(segs.size()) * Hk, [&](int64_t i0, int64_t i1, int) {
    if (i0 < i1) prefetch_conv(i0);
    for (int64_t i = i0; i < i1; ++i) {
      if (i + 1 < i1) prefetch_conv(i + 1);
      const Segment& s = segs[i / Hk];
      const int64_t kh = i % Hk, T = s.num_tokens;
      float* window = s.seq->recurrent().conv(gdn_index);
      const float* raw = mixed + s.row_begin * conv_dim;
      float* rows = conv + s.row_begin * conv_dim;
      for_each_channel_run(kh, [&](int64_t c0, int64_t c1) {
        CausalConv(w.conv.data(), K, conv_dim, c0, c1, window, raw, conv_dim, T, rows);
      });
      for (int64_t t = 0; t < T; ++t) {
        float* row = rows + t * conv_dim;
        kernels::L2Normalize(row + kh * dk, 1, dk, 1e-6f);
        kernels::L2Normalize(row + key_dim + kh * dk, 1, dk, 1e-6f);
        kernels::Scale(row + kh * dk, q_scale, dk);
      }
      const float* q = rows + kh * dk;
      const float* k = rows + key_dim + kh * dk;
      for (int64_t j = 0; j < ratio; ++j) {
        const int64_t h = value_head(kh, j);
        float* gh = g + s.row_begin * Hv + h;
        float* bh = beta + s.row_begin * Hv + h;
        for (int64_t t = 0; t < T; ++t) {
          bh[t * Hv] = 1.0f / (1.0f + std::exp(-bh[t * Hv]));
          gh[t * Hv] = w.ssm_a[h] * Softplus(gh[t * Hv] + w.dt_bias[h]);
        }
        const float* v = rows + 2 * key_dim + h * dv;
        const HeadState hs = HeadStateOf(s, gdn_index, h, dk * dv);
        float* S = hs.S;
        float* o = core + s.row_begin * value_dim + h * dv;
        ScanSegment(
            s, ctx, S, dk * dv,
            [&](int64_t t0, int64_t n, const kernels::RecurrentOutputs& out) {  // decode rows: the recurrence
              kernels::DeltaRuleRecurrent(q + t0 * conv_dim, k + t0 * conv_dim, conv_dim, v + t0 * conv_dim, conv_dim,
                                          gh + t0 * Hv, bh + t0 * Hv, Hv, n, dk, dv, S, o + t0 * value_dim, value_dim,
                                          out);
            },
            [&](int64_t t0, int64_t n) {
              kernels::DeltaRuleChunked(q + t0 * conv_dim, k + t0 * conv_dim, conv_dim, v + t0 * conv_dim, conv_dim,
                                        gh + t0 * Hv, bh + t0 * Hv, Hv, n, dk, dv, S, o + t0 * value_dim, value_dim);
            },
            [&](size_t c) { return s.captures[c]->delta(gdn_index) + h * dk * dv; }, hs.from, hs.log);
        for (int64_t t = 0; t < T; ++t) {  // o = rmsnorm_dv(o) * norm_w * silu(z)
          float* ot = o + t * value_dim;
          kernels::RmsNorm(ot, w.norm.data(), eps, 1, dv, ot);
          kernels::SiluMul(z + (s.row_begin + t) * value_dim + h * dv, ot, ot, dv);
        }
      }
    }
  });

  kernels::Gemm(w.out_proj, core, value_dim, out, H, R, ctx.pool);
}

}  // namespace lineage::engine
