// Gated DeltaNet mixer (spec §2), for every segment of a batch:
//   mixed = in_proj_qkv xn            [R, conv_dim]  raw q | k | v
//   y     = silu(causal_conv(mixed))  with the sequence's conv window
//   q, k  = l2norm per head; q /= sqrt(d_k)
//   beta  = sigmoid(in_proj_b xn);  g = ssm_a * softplus(in_proj_a xn + dt_bias)
//   o     = delta rule per value head, from and into the sequence's state
//   out   = out_proj( rmsnorm_dv(o) * norm_w * silu(in_proj_z xn) )
#include <immintrin.h>

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
  const int64_t Hk = c.lin_num_k_heads, Hv = c.lin_num_v_heads, dk = c.lin_k_dim, dv = c.lin_v_dim;
  const int64_t key_dim = Hk * dk, value_dim = Hv * dv, conv_dim = c.conv_dim(), K = c.conv_kernel;
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

  ConvAllSegments(w.conv.data(), K, conv_dim, gdn_index, ctx, mixed, conv);
  const std::vector<Segment>& segs = ctx.batch.segments;

  NormalizeQk(conv, R, conv_dim, Hk, dk);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t h = 0; h < Hv; ++h) {
      beta[r * Hv + h] = 1.0f / (1.0f + std::exp(-beta[r * Hv + h]));
      g[r * Hv + h] = w.ssm_a[h] * Softplus(g[r * Hv + h] + w.dt_bias[h]);
    }
  }

  const int64_t ratio = Hv / Hk;
  const bool grouped = c.v_head_order == model::VHeadOrder::kGrouped;
  ctx.pool->parallel_for(static_cast<int64_t>(segs.size()) * Hv, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const Segment& s = segs[i / Hv];
      const int64_t h = i % Hv;
      const int64_t kh = grouped ? h / ratio : h % Hk;
      const float* rows = conv + s.row_begin * conv_dim;
      const float* q = rows + kh * dk;
      const float* k = rows + key_dim + kh * dk;
      const float* v = rows + 2 * key_dim + h * dv;
      float* S = s.seq->recurrent().delta(gdn_index) + h * dk * dv;
      float* o = core + s.row_begin * value_dim + h * dv;
      const float* gh = g + s.row_begin * Hv + h;
      const float* bh = beta + s.row_begin * Hv + h;
      if (s.num_tokens >= ctx.delta_chunked_min_tokens) {
        kernels::DeltaRuleChunked(q, k, conv_dim, v, conv_dim, gh, bh, Hv, s.num_tokens, dk, dv, S, o, value_dim);
      } else {
        kernels::DeltaRuleRecurrent(q, k, conv_dim, v, conv_dim, gh, bh, Hv, s.num_tokens, dk, dv, S, o, value_dim);
      }
    }
  });

  kernels::RmsNorm(core, w.norm.data(), eps, R * Hv, dv, core);
  kernels::SiluMul(z, core, core, R * value_dim);
  kernels::Gemm(w.out_proj, core, value_dim, out, H, R, ctx.pool);
}

}  // namespace lineage::engine
