// Softmax attention's plain reference (tools/reference_math.h).
#include "tools/reference_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"

namespace lineage::kinds::attention {
namespace {

using namespace model;

// Partial NeoX RoPE on the first `dims` entries of one head (§3, §11).
void Rope(double* x, int64_t dims, double theta, int64_t pos) {
  const int64_t half = dims / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double inv_freq = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(dims));
    const double angle = static_cast<double>(pos) * inv_freq;
    const double cs = std::cos(angle), sn = std::sin(angle);
    const double x1 = x[i], x2 = x[i + half];
    x[i] = x1 * cs - x2 * sn;
    x[i + half] = x2 * cs + x1 * sn;
  }
}

// Causal GQA attention, with the per-head sigmoid output gate for qwen3_5.
Mat Attention(const ModelConfig& c, const FullAttentionWeights& w, const Mat& x) {
  const int64_t T = static_cast<int64_t>(x.size());
  const int64_t nh = c.num_heads, nkv = c.num_kv_heads, hd = c.head_dim;
  const int64_t q_stride = c.attn_output_gate ? 2 * hd : hd;
  const Mat qg = MatMul(w.q_proj, x);
  Mat k = MatMul(w.k_proj, x);
  const Mat v = MatMul(w.v_proj, x);
  Mat q(static_cast<size_t>(T), Vec(static_cast<size_t>(nh * hd)));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < nh; ++h) {
      std::copy_n(&qg[t][h * q_stride], hd, &q[t][h * hd]);
      RmsNormInPlace(&q[t][h * hd], hd, w.q_norm, c.rms_eps);
      Rope(&q[t][h * hd], c.rope_dims, c.rope_theta, t);
    }
    for (int64_t h = 0; h < nkv; ++h) {
      RmsNormInPlace(&k[t][h * hd], hd, w.k_norm, c.rms_eps);
      Rope(&k[t][h * hd], c.rope_dims, c.rope_theta, t);
    }
  }
  Mat out(static_cast<size_t>(T), Vec(static_cast<size_t>(nh * hd), 0.0));
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < nh; ++h) {
      const int64_t kvh = h / (nh / nkv);
      Vec p(static_cast<size_t>(t + 1));
      double mx = -1e300;
      for (int64_t u = 0; u <= t; ++u) {
        double s = 0;
        for (int64_t i = 0; i < hd; ++i) s += q[t][h * hd + i] * k[u][kvh * hd + i];
        p[u] = s * scale;
        mx = std::max(mx, p[u]);
      }
      double sum = 0;
      for (double& e : p) sum += (e = std::exp(e - mx));
      for (int64_t u = 0; u <= t; ++u)
        for (int64_t i = 0; i < hd; ++i) out[t][h * hd + i] += p[u] / sum * v[u][kvh * hd + i];
      if (c.attn_output_gate)
        for (int64_t i = 0; i < hd; ++i) out[t][h * hd + i] *= Sigmoid(qg[t][h * q_stride + hd + i]);
    }
  return MatMul(w.o_proj, out);
}

Mat Run(const ModelConfig& c, int64_t, const LayerWeights& w, const Mat& x, ReferenceLayerState*) {
  return Attention(c, w.full, x);
}

}  // namespace

extern const model::ReferenceMixer kReference{Run};

}  // namespace lineage::kinds::attention
