// Kimi Delta Attention's plain reference (tools/reference_math.h).
#include "tools/reference_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"

namespace lineage::kinds::kda {
namespace {

using namespace model;

// Kimi Delta Attention over a whole sequence from zero state (spec §7.2):
// separate causal convs + SiLU for q, k, v; per-channel log-decay
// g = ssm_a * softplus(f_b f_a x + dt_bias); beta = sigmoid(b_proj x);
// L2-normalised q (then / sqrt(d)) and k; the delta rule with diag(exp(g));
// RMSNorm(o) * sigmoid(g_b g_a x); o_proj.
Mat KimiDelta(const ModelConfig& c, const KdaWeights& w, const Mat& x) {
  const int64_t T = static_cast<int64_t>(x.size());
  const int64_t nh = c.delta.k_heads, d = c.delta.k_dim, inner = nh * d, K = c.delta.conv_kernel;
  const Mat raw[3] = {MatMul(w.q_proj, x), MatMul(w.k_proj, x), MatMul(w.v_proj, x)};
  Mat conv[3];
  for (int64_t m = 0; m < 3; ++m) {
    conv[m].assign(static_cast<size_t>(T), Vec(static_cast<size_t>(inner)));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t ch = 0; ch < inner; ++ch) {
        double s = 0;
        for (int64_t j = 0; j < K; ++j) {
          const int64_t src = t - (K - 1) + j;
          if (src >= 0) s += static_cast<double>(w.conv[(m * inner + ch) * K + j]) * raw[m][src][ch];
        }
        conv[m][t][ch] = Silu(s);
      }
  }
  const Mat f = MatMul(w.f_b, MatMul(w.f_a, x));
  const Mat b = MatMul(w.b_proj, x);
  // K3: a full-rank output gate (spec latent-attention §2.1).
  const Mat gate = w.g_full.valid() ? MatMul(w.g_full, x) : MatMul(w.g_b, MatMul(w.g_a, x));
  std::vector<Mat> state(static_cast<size_t>(nh), Mat(static_cast<size_t>(d), Vec(static_cast<size_t>(d), 0.0)));
  Mat o_all(static_cast<size_t>(T), Vec(static_cast<size_t>(inner)));
  const double q_scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < nh; ++h) {
      Vec q(&conv[0][t][h * d], &conv[0][t][h * d] + d), k(&conv[1][t][h * d], &conv[1][t][h * d] + d);
      const double* v = &conv[2][t][h * d];
      L2NormInPlace(q.data(), d);
      L2NormInPlace(k.data(), d);
      for (double& e : q) e *= q_scale;
      const double beta = Sigmoid(b[t][h]);
      Mat& S = state[h];  // S[i][j]: key channel i, value channel j
      for (int64_t i = 0; i < d; ++i) {
        // K3 bounds the log-decay below: lb sigmoid(exp(A_log) (f + dt_bias)),
        // with exp(A_log) = -ssm_a; Kimi Linear: ssm_a softplus(f + dt_bias).
        const double pre = f[t][h * d + i] + w.dt_bias[h * d + i];
        const double g = c.delta.gate_lower_bound < 0
                             ? c.delta.gate_lower_bound * Sigmoid(-static_cast<double>(w.ssm_a[h]) * pre)
                             : static_cast<double>(w.ssm_a[h]) * Softplus(pre);
        for (double& e : S[i]) e *= std::exp(g);
      }
      double* o = &o_all[t][h * d];
      DeltaRuleStep(S, q.data(), k.data(), v, beta, o);
      RmsNormInPlace(o, d, w.norm, c.rms_eps);
      for (int64_t j = 0; j < d; ++j) o[j] *= Sigmoid(gate[t][h * d + j]);
    }
  return MatMul(w.o_proj, o_all);
}

Mat Run(const ModelConfig& c, int64_t, const LayerWeights& w, const Mat& x, ReferenceLayerState*) {
  return KimiDelta(c, w.kda, x);
}

}  // namespace

extern const model::ReferenceMixer kReference{Run};

}  // namespace lineage::kinds::kda
