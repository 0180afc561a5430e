// Latent attention's plain reference (latent_reference.h).
#include "kinds/latent_attention/tools/latent_reference.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"
#include "tools/reference_math.h"

namespace lineage::kinds::latent_attention {
namespace {

using namespace model;

// Element (r, col) of a view, as double.
double At(const TensorView& t, int64_t r, int64_t col) {
  float x;
  DecodeToFloat(t, r * t.cols() + col, 1, &x);
  return x;
}

Mat Run(const ModelConfig& c, int64_t, const LayerWeights& w, const Mat& x, ReferenceLayerState*) {
  return LatentAttention(c, w.mla, x, nullptr);
}

}  // namespace

using namespace model;

std::pair<double, double> PairAngle(const ModelConfig& c, int64_t i, int64_t dims, int64_t pos) {
  const double d = static_cast<double>(dims);
  const double angle = static_cast<double>(pos) * std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / d);
  if (c.mla.yarn_factor <= 1) return {angle, 1.0};
  const double s = c.mla.yarn_factor, ctx = static_cast<double>(c.mla.yarn_original_context);
  const double fast = std::floor(d * std::log(ctx / (32.0 * 2.0 * M_PI)) / (2.0 * std::log(c.rope_theta)));
  const double slow = std::ceil(d * std::log(ctx / (1.0 * 2.0 * M_PI)) / (2.0 * std::log(c.rope_theta)));
  const double low = std::max(0.0, fast), high = std::min(d - 1, slow);
  const double keep = 1.0 - std::clamp((static_cast<double>(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
  const double gain = (1.0 + 0.1 * std::log(s)) / (1.0 + 0.1 * c.mla.yarn_mscale_all_dim * std::log(s));
  return {keep * angle + (1.0 - keep) * angle / s, gain};
}

void RopeInterleaved(const ModelConfig& c, double* x, int64_t dims, int64_t pos) {
  for (int64_t i = 0; i < dims / 2; ++i) {
    const auto [angle, gain] = PairAngle(c, i, dims, pos);
    const double cs = std::cos(angle) * gain, sn = std::sin(angle) * gain;
    const double x1 = x[2 * i], x2 = x[2 * i + 1];
    x[2 * i] = x1 * cs - x2 * sn;
    x[2 * i + 1] = x2 * cs + x1 * sn;
  }
}

Mat LatentAttention(const ModelConfig& c, const MlaWeights& w, const Mat& x, const Selection* sel) {
  const int64_t T = static_cast<int64_t>(x.size());
  const int64_t nh = c.num_heads, dn = c.mla.qk_nope_dim, dr = c.mla.qk_rope_dim, dv = c.mla.v_head_dim, L = c.mla.kv_lora_rank;
  const int64_t dq = dn + dr;
  Mat q;
  if (w.q_a.valid()) {
    q = MatMul(w.q_b, NormRows(MatMul(w.q_a, x), w.q_a_norm, c.rms_eps));
  } else {
    q = MatMul(w.q_proj, x);
  }
  Mat lat = MatMul(w.kv_a, x);
  for (Vec& row : lat) RmsNormInPlace(row.data(), L, w.kv_a_norm, c.rms_eps);
  if (c.mla.rope)
    for (int64_t t = 0; t < T; ++t) {
      RopeInterleaved(c, &lat[t][L], dr, t);
      for (int64_t h = 0; h < nh; ++h) RopeInterleaved(c, &q[t][h * dq + dn], dr, t);
    }
  Mat out(static_cast<size_t>(T), Vec(static_cast<size_t>(nh * dv), 0.0));
  // Under YaRN the scores scale by mscale^2, mscale = 1 + 0.1 mscale_all_dim ln s.
  const double mscale = c.mla.yarn_factor > 1 ? 1.0 + 0.1 * c.mla.yarn_mscale_all_dim * std::log(c.mla.yarn_factor) : 1.0;
  const double scale = mscale * mscale / std::sqrt(static_cast<double>(dq));
  for (int64_t h = 0; h < nh; ++h) {
    // W_k,h [dn, L] from k_b_t[h] = W_k,h^T; W_v,h = v_b[h].
    Mat wk(static_cast<size_t>(dn), Vec(static_cast<size_t>(L))), wv(static_cast<size_t>(dv), Vec(static_cast<size_t>(L)));
    for (int64_t l = 0; l < L; ++l) {
      for (int64_t j = 0; j < dn; ++j) wk[j][l] = At(w.k_b_t[h], l, j);
      for (int64_t j = 0; j < dv; ++j) wv[j][l] = At(w.v_b[h], j, l);
    }
    Mat keys(static_cast<size_t>(T), Vec(static_cast<size_t>(dq))), vals(static_cast<size_t>(T), Vec(static_cast<size_t>(dv)));
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t j = 0; j < dn; ++j) {
        double s = 0;
        for (int64_t l = 0; l < L; ++l) s += wk[j][l] * lat[t][l];
        keys[t][j] = s;
      }
      for (int64_t j = 0; j < dr; ++j) keys[t][dn + j] = lat[t][L + j];  // k_pe: shared by the heads
      for (int64_t j = 0; j < dv; ++j) {
        double s = 0;
        for (int64_t l = 0; l < L; ++l) s += wv[j][l] * lat[t][l];
        vals[t][j] = s;
      }
    }
    for (int64_t t = 0; t < T; ++t) {
      Vec p(static_cast<size_t>(t + 1), 0.0);
      double mx = -1e300;
      for (int64_t u = 0; u <= t; ++u) {
        if (sel && !(*sel)[t][u]) continue;
        double s = 0;
        for (int64_t i = 0; i < dq; ++i) s += q[t][h * dq + i] * keys[u][i];
        p[u] = s * scale;
        mx = std::max(mx, p[u]);
      }
      double sum = 0;
      for (int64_t u = 0; u <= t; ++u) sum += (p[u] = sel && !(*sel)[t][u] ? 0.0 : std::exp(p[u] - mx));
      for (int64_t u = 0; u <= t; ++u)
        for (int64_t j = 0; j < dv; ++j) out[t][h * dv + j] += p[u] / sum * vals[u][j];
    }
  }
  if (w.out_gate.valid()) {  // K3: u *= sigmoid(attn_gate x)
    const Mat gate = MatMul(w.out_gate, x);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < nh * dv; ++j) out[t][j] *= Sigmoid(gate[t][j]);
  }
  return MatMul(w.o_proj, out);
}

extern const model::ReferenceMixer kReference{Run};

}  // namespace lineage::kinds::latent_attention
