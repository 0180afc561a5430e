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
#include "engine/layers.h"
#include "engine/multi_gemm.h"

namespace lineage::engine {
namespace {

float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// y[c] += w[c] * x[c]. Written with AVX2 (the build's baseline) because -O2
// leaves loops of unknown length scalar.
void MulAdd(const float* w, const float* x, float* y, int64_t n) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    _mm256_storeu_ps(y + c, _mm256_fmadd_ps(_mm256_loadu_ps(w + c), _mm256_loadu_ps(x + c), _mm256_loadu_ps(y + c)));
  }
  for (; c < n; ++c) y[c] += w[c] * x[c];
}

// Causal depthwise conv + SiLU over channels [c0, c1) of one segment's T raw
// rows `in` (stride ld), continuing from `window` [K-1, conv_dim] (oldest
// first), then slides the window to the segment's last K-1 raw rows.
void CausalConv(const float* weight, int64_t K, int64_t conv_dim, int64_t c0, int64_t c1, float* window,
                const float* in, int64_t ld, int64_t T, float* y) {
  const int64_t keep = K - 1, n = c1 - c0;
  // Tap-major copy of this block's weights, so the channel loop is contiguous.
  thread_local std::vector<float> taps;
  taps.resize(static_cast<size_t>(K * n));
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t j = 0; j < K; ++j) taps[j * n + c] = weight[(c0 + c) * K + j];
  }
  for (int64_t t = 0; t < T; ++t) {
    float* yrow = y + t * ld + c0;
    for (int64_t c = 0; c < n; ++c) yrow[c] = 0.0f;
    for (int64_t j = 0; j < K; ++j) {
      const int64_t u = t - keep + j;  // input row; negative rows come from the window
      const float* xrow = (u < 0 ? window + (keep + u) * conv_dim : in + u * ld) + c0;
      MulAdd(taps.data() + j * n, xrow, yrow, n);
    }
    kernels::Silu(yrow, yrow, n);
  }
  // New window = last K-1 rows of [window ; in].
  for (int64_t i = 0; i < keep; ++i) {
    const int64_t u = T - keep + i;  // source row in the concatenation, relative to `in`
    float* dst = window + i * conv_dim;
    if (u >= 0) {
      std::memcpy(dst + c0, in + u * ld + c0, static_cast<size_t>(c1 - c0) * 4);
    } else {
      // u < 0 refers to window row keep + u, which is >= i: moving rows up in
      // increasing i never overwrites a row still to be read.
      std::memcpy(dst + c0, window + (keep + u) * conv_dim + c0, static_cast<size_t>(c1 - c0) * 4);
    }
  }
}

}  // namespace

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

  const std::vector<Segment>& segs = ctx.batch.segments;
  const int64_t kConvGrain = 256;
  const int64_t num_blocks = (conv_dim + kConvGrain - 1) / kConvGrain;
  ctx.pool->parallel_for(static_cast<int64_t>(segs.size()) * num_blocks, [&](int64_t b0, int64_t b1, int) {
    for (int64_t b = b0; b < b1; ++b) {
      const Segment& s = segs[b / num_blocks];
      const int64_t c0 = (b % num_blocks) * kConvGrain, c1 = std::min(conv_dim, c0 + kConvGrain);
      CausalConv(w.conv.data(), K, conv_dim, c0, c1, s.seq->recurrent().conv(gdn_index),
                 mixed + s.row_begin * conv_dim, conv_dim, s.num_tokens, conv + s.row_begin * conv_dim);
    }
  });

  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (int64_t r = 0; r < R; ++r) {
    float* row = conv + r * conv_dim;
    kernels::L2Normalize(row, 2 * Hk, dk, 1e-6f);  // q heads then k heads, adjacent
    kernels::Scale(row, q_scale, key_dim);
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
