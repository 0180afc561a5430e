// Gated DeltaNet's plain reference (tools/reference_math.h).
#include "tools/reference_math.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "model/encode.h"

namespace lineage::kinds::gated_deltanet {
namespace {

using namespace model;

// Qwen3-Next's fused projections (spec §2.1): the output of in_proj_qkvz,
// viewed as [H_k, 2 d_k + 2 r d_v], holds per key group g [q_g | k_g | v_g | z_g];
// the flat q, k, v are concatenated [q_all | k_all | v_all] (V grouped).
void SplitQkvz(const ModelConfig& c, const Mat& qkvz, Mat* mixed, Mat* z) {
  const int64_t Hk = c.delta.k_heads, dk = c.delta.k_dim, dv = c.delta.v_dim, r = c.delta.v_heads / Hk;
  const int64_t key_dim = Hk * dk, group = 2 * dk + 2 * r * dv;
  mixed->assign(qkvz.size(), Vec(static_cast<size_t>(c.delta.conv_dim())));
  z->assign(qkvz.size(), Vec(static_cast<size_t>(c.delta.v_heads * dv)));
  for (size_t t = 0; t < qkvz.size(); ++t)
    for (int64_t g = 0; g < Hk; ++g) {
      const double* src = &qkvz[t][g * group];
      std::copy_n(src, dk, &(*mixed)[t][g * dk]);
      std::copy_n(src + dk, dk, &(*mixed)[t][key_dim + g * dk]);
      std::copy_n(src + 2 * dk, r * dv, &(*mixed)[t][2 * key_dim + g * r * dv]);
      std::copy_n(src + 2 * dk + r * dv, r * dv, &(*z)[t][g * r * dv]);
    }
}

// in_proj_ba's output, [H_k, 2r]: per key group g [b_g (r) | a_g (r)].
void SplitBa(const ModelConfig& c, const Mat& ba, Mat* b, Mat* a) {
  const int64_t Hk = c.delta.k_heads, r = c.delta.v_heads / Hk;
  b->assign(ba.size(), Vec(static_cast<size_t>(c.delta.v_heads)));
  a->assign(ba.size(), Vec(static_cast<size_t>(c.delta.v_heads)));
  for (size_t t = 0; t < ba.size(); ++t)
    for (int64_t g = 0; g < Hk; ++g)
      for (int64_t j = 0; j < r; ++j) {
        (*b)[t][g * r + j] = ba[t][g * 2 * r + j];
        (*a)[t][g * r + j] = ba[t][g * 2 * r + r + j];
      }
}

// Gated DeltaNet over a whole sequence from zero state (spec §2.1–§2.7).
Mat GatedDeltaNet(const ModelConfig& c, const LinearAttentionWeights& w, const Mat& x) {
  const int64_t T = static_cast<int64_t>(x.size());
  const int64_t Hk = c.delta.k_heads, Hv = c.delta.v_heads, dk = c.delta.k_dim, dv = c.delta.v_dim;
  const int64_t key_dim = Hk * dk, conv_dim = c.delta.conv_dim(), K = c.delta.conv_kernel, r = Hv / Hk;
  Mat mixed, z, b, a;
  if (w.in_proj_qkvz.valid()) {
    SplitQkvz(c, MatMul(w.in_proj_qkvz, x), &mixed, &z);
  } else {
    mixed = MatMul(w.in_proj_qkv, x);
    z = MatMul(w.in_proj_z, x);
  }
  if (w.in_proj_ba.valid()) {
    SplitBa(c, MatMul(w.in_proj_ba, x), &b, &a);
  } else {
    b = MatMul(w.in_proj_b, x);
    a = MatMul(w.in_proj_a, x);
  }

  // Causal depthwise conv over the raw projections, then SiLU (§2.2).
  Mat y(static_cast<size_t>(T), Vec(static_cast<size_t>(conv_dim)));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t ch = 0; ch < conv_dim; ++ch) {
      double s = 0;
      for (int64_t j = 0; j < K; ++j) {
        int64_t src = t - (K - 1) + j;
        if (src >= 0) s += static_cast<double>(w.conv[ch * K + j]) * mixed[src][ch];
      }
      y[t][ch] = Silu(s);
    }

  std::vector<Mat> state(static_cast<size_t>(Hv), Mat(static_cast<size_t>(dk), Vec(static_cast<size_t>(dv), 0.0)));
  Mat o_all(static_cast<size_t>(T), Vec(static_cast<size_t>(Hv * dv)));
  const double q_scale = 1.0 / std::sqrt(static_cast<double>(dk));
  for (int64_t t = 0; t < T; ++t) {
    Vec qk = y[t];  // q and k normalised per key head (§2.4)
    for (int64_t kh = 0; kh < Hk; ++kh) {
      L2NormInPlace(&qk[kh * dk], dk);
      L2NormInPlace(&qk[key_dim + kh * dk], dk);
      for (int64_t i = 0; i < dk; ++i) qk[kh * dk + i] *= q_scale;
    }
    for (int64_t h = 0; h < Hv; ++h) {
      const int64_t kh = c.delta.v_head_order == VHeadOrder::kGrouped ? h / r : h % Hk;
      const double* q = &qk[kh * dk];
      const double* k = &qk[key_dim + kh * dk];
      const double* v = &y[t][2 * key_dim + h * dv];
      const double beta = Sigmoid(b[t][h]);
      const double g = static_cast<double>(w.ssm_a[h]) * Softplus(a[t][h] + w.dt_bias[h]);
      Mat& S = state[h];
      const double decay = std::exp(g);
      for (auto& row : S)
        for (double& s : row) s *= decay;
      double* o = &o_all[t][h * dv];
      DeltaRuleStep(S, q, k, v, beta, o);
      RmsNormInPlace(o, dv, w.norm, c.rms_eps);  // §2.7: plain weight, then SiLU(z) gate
      for (int64_t j = 0; j < dv; ++j) o[j] *= Silu(z[t][h * dv + j]);
    }
  }
  return MatMul(w.out_proj, o_all);
}

Mat Run(const ModelConfig& c, int64_t, const LayerWeights& w, const Mat& x, ReferenceLayerState*) {
  return GatedDeltaNet(c, w.linear, x);
}

}  // namespace

extern const model::ReferenceMixer kReference{Run};

}  // namespace lineage::kinds::gated_deltanet
