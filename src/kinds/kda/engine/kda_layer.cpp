// Kimi Delta Attention mixer (spec §7.2), for every segment of a batch:
//   q | k | v = q_proj xn | k_proj xn | v_proj xn   raw, [R, 3 inner]
//   y         = silu(causal_conv(q | k | v))        per channel, with the sequence's window
//   q, k      = l2norm per head; q /= sqrt(d)
//   g         = ssm_a[h] * softplus(f_b f_a xn + dt_bias)   per channel
//               (K3: lb * sigmoid(-ssm_a[h] (f_b f_a xn + dt_bias)), in (lb, 0))
//   beta      = sigmoid(b_proj xn)
//   o         = KDA delta rule per head, from and into the sequence's state
//   out       = o_proj( rmsnorm_d(o) * norm_w * sigmoid(g_b g_a xn) )   (K3: sigmoid(g xn), full rank)
// The conv window and S live where a GDN layer's do (RecurrentState): the
// three convs' channels are one [q | k | v] window of 3 inner channels.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kda_rule.h"
#include "core/kernels.h"
#include "engine/layers.h"
#include "engine/multi_gemm.h"
#include "engine/recurrent_ops.h"

namespace lineage::engine {
namespace {

// x[i] *= y[i].
void MulInPlace(float* x, const float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) x[i] *= y[i];
}

}  // namespace

void KimiDeltaAttention(const model::KdaWeights& w, int64_t kda_index, const StepContext& ctx, const float* xn,
                        float* out) {
  const model::ModelConfig& c = ctx.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden;
  const int64_t nh = c.delta.k_heads, d = c.delta.k_dim, inner = nh * d, conv_dim = 3 * inner, K = c.delta.conv_kernel;
  LatentScratch& ks = ctx.ws.latent;
  float* mixed = ctx.ws.wide0.data();  // [R, 3 inner] raw q | k | v
  float* conv = ctx.ws.wide1.data();   // [R, 3 inner] after conv + SiLU
  float* low = ks.low.data();          // [R, 2 d]: f_a xn | g_a xn
  float* decay = ks.decay.data();      // [R, inner]
  float* gate = ks.gate.data();        // [R, inner]
  float* core = ctx.ws.mid1.data();    // [R, inner]
  float* beta = ctx.ws.heads0.data();  // [R, nh]
  if (w.g_full.valid()) {  // K3: the output gate is one full-rank projection
    MultiGemm({{&w.q_proj, mixed, conv_dim}, {&w.k_proj, mixed + inner, conv_dim},
               {&w.v_proj, mixed + 2 * inner, conv_dim}, {&w.f_a, low, 2 * d}, {&w.g_full, gate, inner},
               {&w.b_proj, beta, nh}},
              xn, H, R, ctx.pool);
  } else {
    MultiGemm({{&w.q_proj, mixed, conv_dim}, {&w.k_proj, mixed + inner, conv_dim},
               {&w.v_proj, mixed + 2 * inner, conv_dim}, {&w.f_a, low, 2 * d}, {&w.g_a, low + d, 2 * d},
               {&w.b_proj, beta, nh}},
              xn, H, R, ctx.pool);
    kernels::Gemm(w.g_b, low + d, 2 * d, gate, inner, R, ctx.pool);
  }
  kernels::Gemm(w.f_b, low, 2 * d, decay, inner, R, ctx.pool);

  CaptureConvWindows(K, conv_dim, kda_index, ctx, mixed);
  LogRawRows(conv_dim, kda_index, ctx, mixed);
  ConvAllSegments(w.conv.data(), K, conv_dim, kda_index, ctx, mixed, conv);
  const std::vector<Segment>& segs = ctx.batch.segments;

  NormalizeQk(conv, R, conv_dim, nh, d);
  const float lower_bound = static_cast<float>(c.delta.gate_lower_bound);
  // β = sigmoid, and the per-channel log-decays g from f + dt_bias, a row
  // at a time on every thread (a prefill's rows hold millions of channels).
  ctx.pool->parallel_for(R, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      kernels::Sigmoid(beta + r * nh, beta + r * nh, nh);
      float* g = decay + r * inner;
      kernels::Add(g, w.dt_bias.data(), g, inner);
      if (lower_bound < 0) {  // K3: lb sigmoid(exp(A_log) (f + dt_bias)), exp(A_log) = -ssm_a
        for (int64_t h = 0; h < nh; ++h) kernels::Scale(g + h * d, -w.ssm_a[h], d);
        kernels::Sigmoid(g, g, inner);
        kernels::Scale(g, lower_bound, inner);
      } else {  // ssm_a softplus(f + dt_bias)
        kernels::Softplus(g, g, inner);
        for (int64_t h = 0; h < nh; ++h) kernels::Scale(g + h * d, w.ssm_a[h], d);
      }
    }
  });

  ctx.pool->parallel_for(static_cast<int64_t>(segs.size()) * nh, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      const Segment& s = segs[i / nh];
      const int64_t h = i % nh;
      const float* rows = conv + s.row_begin * conv_dim;
      const float* q = rows + h * d;
      const float* k = rows + inner + h * d;
      const float* v = rows + 2 * inner + h * d;
      const float* g = decay + s.row_begin * inner + h * d;
      const float* b = beta + s.row_begin * nh + h;
      const HeadState hs = HeadStateOf(s, kda_index, h, d * d);
      float* S = hs.S;
      float* o = core + s.row_begin * inner + h * d;
      ScanSegment(
          s, ctx, S, d * d,
          [&](int64_t t0, int64_t n, const kernels::RecurrentOutputs& out) {  // decode rows: the recurrence
            kernels::KdaRecurrent(q + t0 * conv_dim, k + t0 * conv_dim, conv_dim, v + t0 * conv_dim, conv_dim,
                                  g + t0 * inner, inner, b + t0 * nh, nh, n, d, d, S, o + t0 * inner, inner, out);
          },
          [&](int64_t t0, int64_t n) {
            kernels::KdaChunked(q + t0 * conv_dim, k + t0 * conv_dim, conv_dim, v + t0 * conv_dim, conv_dim,
                                g + t0 * inner, inner, b + t0 * nh, nh, n, d, d, S, o + t0 * inner, inner);
          },
          [&](size_t c) { return s.captures[c]->delta(kda_index) + h * d * d; }, hs.from, hs.log);
    }
  });

  kernels::RmsNorm(core, w.norm.data(), static_cast<float>(c.rms_eps), R * nh, d, core);
  kernels::Sigmoid(gate, gate, R * inner);
  MulInPlace(core, gate, R * inner);
  kernels::Gemm(w.o_proj, core, inner, out, H, R, ctx.pool);
}

}  // namespace lineage::engine
