#include "tools/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace lineage::model {
namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // [T][n]: one row per token

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Silu(double x) { return x * Sigmoid(x); }
double Softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }

// Y[t] = W X[t] for a weight W [out, in]; each row is decoded once.
Mat MatMul(const TensorView& w, const Mat& x) {
  const int64_t rows = w.shape[0], cols = w.shape[1];
  Mat y(x.size(), Vec(static_cast<size_t>(rows)));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    DecodeToFloat(w, r * cols, cols, row.data());
    for (size_t t = 0; t < x.size(); ++t) {
      double s = 0;
      for (int64_t i = 0; i < cols; ++i) s += static_cast<double>(row[i]) * x[t][i];
      y[t][r] = s;
    }
  }
  return y;
}

// RMSNorm of x[off, off + n) with scale w (the effective scale), in place.
void RmsNormInPlace(double* x, int64_t n, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * inv * w[i];
}

Mat NormRows(const Mat& h, const std::vector<float>& w, double eps) {
  Mat out = h;
  for (Vec& row : out) RmsNormInPlace(row.data(), static_cast<int64_t>(row.size()), w, eps);
  return out;
}

void L2NormInPlace(double* x, int64_t n) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(ss + 1e-6);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

// Qwen3-Next's fused projections (spec §2.1): the output of in_proj_qkvz,
// viewed as [H_k, 2 d_k + 2 r d_v], holds per key group g [q_g | k_g | v_g | z_g];
// the flat q, k, v are concatenated [q_all | k_all | v_all] (V grouped).
void SplitQkvz(const ModelConfig& c, const Mat& qkvz, Mat* mixed, Mat* z) {
  const int64_t Hk = c.lin_num_k_heads, dk = c.lin_k_dim, dv = c.lin_v_dim, r = c.lin_num_v_heads / Hk;
  const int64_t key_dim = Hk * dk, group = 2 * dk + 2 * r * dv;
  mixed->assign(qkvz.size(), Vec(static_cast<size_t>(c.conv_dim())));
  z->assign(qkvz.size(), Vec(static_cast<size_t>(c.lin_num_v_heads * dv)));
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
  const int64_t Hk = c.lin_num_k_heads, r = c.lin_num_v_heads / Hk;
  b->assign(ba.size(), Vec(static_cast<size_t>(c.lin_num_v_heads)));
  a->assign(ba.size(), Vec(static_cast<size_t>(c.lin_num_v_heads)));
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
  const int64_t Hk = c.lin_num_k_heads, Hv = c.lin_num_v_heads, dk = c.lin_k_dim, dv = c.lin_v_dim;
  const int64_t key_dim = Hk * dk, conv_dim = c.conv_dim(), K = c.conv_kernel, r = Hv / Hk;
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
      const int64_t kh = c.v_head_order == VHeadOrder::kGrouped ? h / r : h % Hk;
      const double* q = &qk[kh * dk];
      const double* k = &qk[key_dim + kh * dk];
      const double* v = &y[t][2 * key_dim + h * dv];
      const double beta = Sigmoid(b[t][h]);
      const double g = static_cast<double>(w.ssm_a[h]) * Softplus(a[t][h] + w.dt_bias[h]);
      Mat& S = state[h];
      const double decay = std::exp(g);
      for (auto& row : S)
        for (double& s : row) s *= decay;
      for (int64_t j = 0; j < dv; ++j) {  // delta = beta (v - S^T k); S += k delta^T
        double m = 0;
        for (int64_t i = 0; i < dk; ++i) m += S[i][j] * k[i];
        const double delta = beta * (v[j] - m);
        for (int64_t i = 0; i < dk; ++i) S[i][j] += k[i] * delta;
      }
      double* o = &o_all[t][h * dv];
      for (int64_t j = 0; j < dv; ++j) {
        double s = 0;
        for (int64_t i = 0; i < dk; ++i) s += S[i][j] * q[i];
        o[j] = s;
      }
      RmsNormInPlace(o, dv, w.norm, c.rms_eps);  // §2.7: plain weight, then SiLU(z) gate
      for (int64_t j = 0; j < dv; ++j) o[j] *= Silu(z[t][h * dv + j]);
    }
  }
  return MatMul(w.out_proj, o_all);
}

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

// The gated activation of an FFN: silu(g) u, or Kimi K3's SiTU (spec
// latent-attention §2.4) beta tanh(g / beta) sigmoid(g) lambda tanh(u /
// lambda) when c.situ_beta > 0 (u itself for lambda <= 0).
double GatedActivation(const ModelConfig& c, double g, double u) {
  if (c.situ_beta <= 0) return Silu(g) * u;
  const double b = c.situ_beta, lam = c.situ_linear_beta;
  return b * std::tanh(g / b) * Sigmoid(g) * (lam > 0 ? lam * std::tanh(u / lam) : u);
}

Mat SwiGlu(const ModelConfig& c, const TensorView& gate, const TensorView& up, const TensorView& down, const Mat& x) {
  Mat g = MatMul(gate, x);
  const Mat u = MatMul(up, x);
  for (size_t t = 0; t < g.size(); ++t)
    for (size_t i = 0; i < g[t].size(); ++i) g[t][i] = GatedActivation(c, g[t][i], u[t][i]);
  return MatMul(down, g);
}

// Sparse MoE FFN (spec §4.3), token by token: softmax over all router
// logits, the top k (ties to the lower expert id) renormalised to sum to 1,
// plus the shared expert scaled by sigmoid(x . shared_gate_inp).
Mat Moe(const ModelConfig& c, const MoeWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen_out) {
  const int64_t E = c.num_experts, k = c.experts_per_token;
  const Mat logits = MatMul(w.router, x);
  Mat out = SwiGlu(c, w.shared_gate, w.shared_up, w.shared_down, x);
  for (size_t t = 0; t < x.size(); ++t) {
    double s = 0;
    for (size_t i = 0; i < x[t].size(); ++i) s += static_cast<double>(w.shared_gate_inp[i]) * x[t][i];
    for (double& o : out[t]) o *= Sigmoid(s);
    const double mx = *std::max_element(logits[t].begin(), logits[t].end());
    Vec p(static_cast<size_t>(E));
    double sum = 0;
    for (int64_t e = 0; e < E; ++e) sum += (p[e] = std::exp(logits[t][e] - mx));
    for (double& v : p) v /= sum;
    std::vector<int64_t> order(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    double chosen = 0;
    for (int64_t j = 0; j < k; ++j) chosen += p[order[j]];
    if (chosen_out) chosen_out->emplace_back(order.begin(), order.begin() + k);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = order[j];
      const Vec y = SwiGlu(c, w.gate[e], w.up[e], w.down[e], Mat{x[t]})[0];
      for (size_t i = 0; i < y.size(); ++i) out[t][i] += p[e] / chosen * y[i];
    }
  }
  return out;
}

// Kimi Delta Attention over a whole sequence from zero state (spec §7.2):
// separate causal convs + SiLU for q, k, v; per-channel log-decay
// g = ssm_a * softplus(f_b f_a x + dt_bias); beta = sigmoid(b_proj x);
// L2-normalised q (then / sqrt(d)) and k; the delta rule with diag(exp(g));
// RMSNorm(o) * sigmoid(g_b g_a x); o_proj.
Mat KimiDelta(const ModelConfig& c, const KdaWeights& w, const Mat& x) {
  const int64_t T = static_cast<int64_t>(x.size());
  const int64_t nh = c.lin_num_k_heads, d = c.lin_k_dim, inner = nh * d, K = c.conv_kernel;
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
        const double g = c.kda_gate_lower_bound < 0
                             ? c.kda_gate_lower_bound * Sigmoid(-static_cast<double>(w.ssm_a[h]) * pre)
                             : static_cast<double>(w.ssm_a[h]) * Softplus(pre);
        for (double& e : S[i]) e *= std::exp(g);
      }
      for (int64_t j = 0; j < d; ++j) {
        double m = 0;
        for (int64_t i = 0; i < d; ++i) m += S[i][j] * k[i];
        const double delta = beta * (v[j] - m);
        for (int64_t i = 0; i < d; ++i) S[i][j] += k[i] * delta;
      }
      double* o = &o_all[t][h * d];
      for (int64_t j = 0; j < d; ++j) {
        double s = 0;
        for (int64_t i = 0; i < d; ++i) s += S[i][j] * q[i];
        o[j] = s;
      }
      RmsNormInPlace(o, d, w.norm, c.rms_eps);
      for (int64_t j = 0; j < d; ++j) o[j] *= Sigmoid(gate[t][h * d + j]);
    }
  return MatMul(w.o_proj, o_all);
}

// Element (r, col) of a view, as double.
double At(const TensorView& t, int64_t r, int64_t col) {
  float x;
  DecodeToFloat(t, r * t.cols() + col, 1, &x);
  return x;
}

// Interleaved ("NORM") RoPE on the pairs (2i, 2i + 1) of x[0, dims), angle
// pos * theta^(-2i / dims) (spec latent-attention §1.1 step 5).
// The angle of pair i of `dims` at `pos` and the factor on its cos and sin,
// under latent attention's YaRN when the model has one (spec latent-attention
// §1.5, ggml's rope_yarn): pairs turning more than beta_fast = 32 times over
// the original context keep their angle, those turning fewer than
// beta_slow = 1 times divide it by the factor, a linear ramp between; cos
// and sin gain (1 + 0.1 ln s) / (1 + 0.1 mscale_all_dim ln s).
std::pair<double, double> PairAngle(const ModelConfig& c, int64_t i, int64_t dims, int64_t pos) {
  const double d = static_cast<double>(dims);
  const double angle = static_cast<double>(pos) * std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / d);
  if (c.yarn_factor <= 1) return {angle, 1.0};
  const double s = c.yarn_factor, ctx = static_cast<double>(c.yarn_original_context);
  const double fast = std::floor(d * std::log(ctx / (32.0 * 2.0 * M_PI)) / (2.0 * std::log(c.rope_theta)));
  const double slow = std::ceil(d * std::log(ctx / (1.0 * 2.0 * M_PI)) / (2.0 * std::log(c.rope_theta)));
  const double low = std::max(0.0, fast), high = std::min(d - 1, slow);
  const double keep = 1.0 - std::clamp((static_cast<double>(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
  const double gain = (1.0 + 0.1 * std::log(s)) / (1.0 + 0.1 * c.yarn_mscale_all_dim * std::log(s));
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

// NEOX pairs (i, i + dims/2) the same way: deepseek32's indexer.
void RopeNeox(const ModelConfig& c, double* x, int64_t dims, int64_t pos) {
  const int64_t half = dims / 2;
  for (int64_t i = 0; i < half; ++i) {
    const auto [angle, gain] = PairAngle(c, i, dims, pos);
    const double cs = std::cos(angle) * gain, sn = std::sin(angle) * gain;
    const double x1 = x[i], x2 = x[i + half];
    x[i] = x1 * cs - x2 * sn;
    x[i + half] = x2 * cs + x1 * sn;
  }
}

// The keys each query may attend to: selected[t][u] for u <= t.
using Selection = std::vector<std::vector<char>>;

// The lightning indexer (spec latent-attention §1.2) of a full layer over a whole sequence,
// in its plain form: every score of every (query, key) pair, then the top
// min(K, t + 1) keys of row t (ties to the lower position). No Hadamard
// rotation: (H q) . (H k) = q . k exactly in this precision.
Selection IndexerSelect(const ModelConfig& c, const MlaWeights& mla, const Mat& x) {
  const IndexerWeights& w = mla.indexer;
  const int64_t T = static_cast<int64_t>(x.size()), Hi = c.indexer_heads, D = c.indexer_dim;
  const int64_t rope = c.qk_rope_dim;
  Mat iq = MatMul(w.q_b, NormRows(MatMul(mla.q_a, x), mla.q_a_norm, c.rms_eps));  // from the normed q latent
  Mat ik = MatMul(w.k, x);
  const Mat wts = MatMul(w.weights_proj, x);
  for (int64_t t = 0; t < T; ++t) {
    double mean = 0, var = 0;
    for (double e : ik[t]) mean += e;
    mean /= static_cast<double>(D);
    for (double e : ik[t]) var += (e - mean) * (e - mean);
    var /= static_cast<double>(D);
    const double inv = 1.0 / std::sqrt(var + c.indexer_norm_eps);
    for (int64_t i = 0; i < D; ++i) ik[t][i] = (ik[t][i] - mean) * inv * w.k_norm[i] + w.k_norm_bias[i];
    auto rotate = [&](double* head) {  // the head's first `rope` dims: [rope | nope]
      if (c.indexer_rope_neox) RopeNeox(c, head, rope, t);
      else RopeInterleaved(c, head, rope, t);
    };
    rotate(ik[t].data());
    for (int64_t h = 0; h < Hi; ++h) rotate(&iq[t][h * D]);
  }
  const double weight_scale = 1.0 / std::sqrt(static_cast<double>(D * Hi));
  Selection sel(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    Vec score(static_cast<size_t>(t + 1), 0.0);
    for (int64_t u = 0; u <= t; ++u)
      for (int64_t h = 0; h < Hi; ++h) {
        double dot = 0;
        for (int64_t i = 0; i < D; ++i) dot += iq[t][h * D + i] * ik[u][i];
        score[u] += wts[t][h] * weight_scale * std::max(0.0, dot);
      }
    std::vector<int64_t> order(static_cast<size_t>(t + 1));
    for (int64_t u = 0; u <= t; ++u) order[u] = u;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return score[a] > score[b]; });
    sel[t].assign(static_cast<size_t>(t + 1), 0);
    for (int64_t j = 0; j < std::min<int64_t>(c.indexer_top_k, t + 1); ++j) sel[t][order[j]] = 1;
  }
  return sel;
}

// Latent attention in the plain (unabsorbed) form (spec §7.3; latent-attention
// §1.1, §1.5): every head's keys [W_k,h c_kv | k_pe] and values W_v,h c_kv
// expanded for every position, softmax over (q_nope.k_nope + q_pe.k_pe) /
// sqrt(dn + dr) over the causal keys (those in `sel` when given). q comes
// from the query LoRA when the layer has one; q_pe and k_pe are rotated when
// latent_rope.
Mat LatentAttention(const ModelConfig& c, const MlaWeights& w, const Mat& x, const Selection* sel) {
  const int64_t T = static_cast<int64_t>(x.size());
  const int64_t nh = c.num_heads, dn = c.qk_nope_dim, dr = c.qk_rope_dim, dv = c.v_head_dim, L = c.kv_lora_rank;
  const int64_t dq = dn + dr;
  Mat q;
  if (w.q_a.valid()) {
    q = MatMul(w.q_b, NormRows(MatMul(w.q_a, x), w.q_a_norm, c.rms_eps));
  } else {
    q = MatMul(w.q_proj, x);
  }
  Mat lat = MatMul(w.kv_a, x);
  for (Vec& row : lat) RmsNormInPlace(row.data(), L, w.kv_a_norm, c.rms_eps);
  if (c.latent_rope)
    for (int64_t t = 0; t < T; ++t) {
      RopeInterleaved(c, &lat[t][L], dr, t);
      for (int64_t h = 0; h < nh; ++h) RopeInterleaved(c, &q[t][h * dq + dn], dr, t);
    }
  Mat out(static_cast<size_t>(T), Vec(static_cast<size_t>(nh * dv), 0.0));
  // Under YaRN the scores scale by mscale^2, mscale = 1 + 0.1 mscale_all_dim ln s.
  const double mscale = c.yarn_factor > 1 ? 1.0 + 0.1 * c.yarn_mscale_all_dim * std::log(c.yarn_factor) : 1.0;
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

// DeepSeek-V3 MoE (spec §7.4; latent-attention §1.7), token by token: s =
// sigmoid(router x); with expert groups, a group scores the sum of its two
// best s + score_bias and only the best expert_groups_used groups stay
// eligible; the top k eligible of s + score_bias (ties to the lower id) are
// chosen; weights s, renormalised (sum clamped at 6.1035e-5) when
// routed_renormalise, times routed_scaling; plus the ungated shared expert.
Mat KimiMoe(const ModelConfig& c, const MoeWeights& w, const Mat& x, std::vector<std::vector<int64_t>>* chosen_out) {
  const int64_t E = c.num_experts, k = c.experts_per_token, G = c.expert_groups, per_group = E / G;
  const Mat logits = MatMul(w.router, x);
  Mat out = SwiGlu(c, w.shared_gate, w.shared_up, w.shared_down, x);
  for (size_t t = 0; t < x.size(); ++t) {
    Vec s(static_cast<size_t>(E)), sel(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      s[e] = Sigmoid(logits[t][e]);
      sel[e] = s[e] + w.score_bias[e];
    }
    if (G > 1) {
      Vec group_score(static_cast<size_t>(G));
      for (int64_t g = 0; g < G; ++g) {
        Vec members(sel.begin() + g * per_group, sel.begin() + (g + 1) * per_group);
        std::sort(members.rbegin(), members.rend());
        group_score[g] = members[0] + (per_group > 1 ? members[1] : 0.0);
      }
      std::vector<int64_t> groups(static_cast<size_t>(G));
      for (int64_t g = 0; g < G; ++g) groups[g] = g;
      std::stable_sort(groups.begin(), groups.end(), [&](int64_t a, int64_t b) { return group_score[a] > group_score[b]; });
      for (int64_t j = c.expert_groups_used; j < G; ++j)
        for (int64_t e = groups[j] * per_group; e < (groups[j] + 1) * per_group; ++e) sel[e] = -1e300;
    }
    std::vector<int64_t> order(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sel[a] > sel[b]; });
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += s[order[j]];
    const double norm = c.routed_renormalise ? std::max(sum, 6.1035e-5) : 1.0;
    if (chosen_out) chosen_out->emplace_back(order.begin(), order.begin() + k);
    // K3 (spec latent-attention §2.3): the experts run on z = latent_down x,
    // and their weighted sum r becomes latent_up (rmsnorm(r) latent_norm).
    const Vec z = w.latent_down.valid() ? MatMul(w.latent_down, Mat{x[t]})[0] : x[t];
    Vec r(z.size(), 0.0);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = order[j];
      const Vec y = SwiGlu(c, w.gate[e], w.up[e], w.down[e], Mat{z})[0];
      for (size_t i = 0; i < y.size(); ++i) r[i] += s[e] / norm * c.routed_scaling * y[i];
    }
    if (w.latent_up.valid()) {
      if (!w.latent_norm.empty()) RmsNormInPlace(r.data(), static_cast<int64_t>(r.size()), w.latent_norm, c.rms_eps);
      r = MatMul(w.latent_up, Mat{r})[0];
    }
    for (size_t i = 0; i < r.size(); ++i) out[t][i] += r[i];
  }
  return out;
}

// Block AttnRes' mix (spec latent-attention §2.5) of row t: the softmax over
// [bank..., c] of each vector's weightless RMSNorm dotted with `w`, applied
// to the raw vectors.
Mat AttnResMix(const ModelConfig& c, const std::vector<Mat>& bank, const Mat& cur, const std::vector<float>& w) {
  if (bank.empty()) return cur;
  Mat out = cur;
  const int64_t H = c.hidden;
  auto score = [&](const Vec& v) {
    double ss = 0, dot = 0;
    for (int64_t i = 0; i < H; ++i) ss += v[i] * v[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(H) + c.rms_eps);
    for (int64_t i = 0; i < H; ++i) dot += v[i] * inv * w[i];
    return dot;
  };
  for (size_t t = 0; t < cur.size(); ++t) {
    Vec s;
    for (const Mat& b : bank) s.push_back(score(b[t]));
    s.push_back(score(cur[t]));
    const double mx = *std::max_element(s.begin(), s.end());
    double sum = 0;
    for (double& e : s) sum += (e = std::exp(e - mx));
    for (int64_t i = 0; i < H; ++i) {
      double v = s.back() / sum * cur[t][i];
      for (size_t j = 0; j < bank.size(); ++j) v += s[j] / sum * bank[j][t][i];
      out[t][i] = v;
    }
  }
  return out;
}

void AddInPlace(Mat& h, const Mat& d) {
  for (size_t t = 0; t < h.size(); ++t)
    for (size_t i = 0; i < h[t].size(); ++i) h[t][i] += d[t][i];
}

double MaxRms(const Mat& h) {
  double mx = 0;
  for (const Vec& row : h) {
    double ss = 0;
    for (double e : row) ss += e * e;
    mx = std::max(mx, std::sqrt(ss / static_cast<double>(row.size())));
  }
  return mx;
}

// Layer l's mixer and feed-forward by its kinds (layer_kinds.h); l = L is
// the MTP block (weights `L`). `selection` carries the latest full sparse
// layer's choice to the shared layers above it.
Mat Mixer(const ModelConfig& c, int64_t l, const LayerWeights& L, const Mat& x, Selection* selection) {
  switch (c.mixer(l)) {
    case MixerKind::kGatedDeltaNet: return GatedDeltaNet(c, L.linear, x);
    case MixerKind::kKimiDelta: return KimiDelta(c, L.kda, x);
    case MixerKind::kAttention: return Attention(c, L.full, x);
    case MixerKind::kLatent: return LatentAttention(c, L.mla, x, nullptr);
    case MixerKind::kSparseLatent:
      if (c.indexer_layer(l)) *selection = IndexerSelect(c, L.mla, x);
      return LatentAttention(c, L.mla, x, selection);
  }
  return x;
}

Mat Ffn(const ModelConfig& c, int64_t l, const LayerWeights& L, const Mat& x,
        std::vector<std::vector<int64_t>>* chosen) {
  switch (c.ffn(l)) {
    case FfnKind::kDense: return SwiGlu(c, L.gate_proj, L.up_proj, L.down_proj, x);
    case FfnKind::kMoe: return Moe(c, L.moe, x, chosen);
    case FfnKind::kDeepseekMoe: return KimiMoe(c, L.moe, x, chosen);
  }
  return x;
}

}  // namespace

namespace {

// The final-normed residual stream of every position of `tokens` (the input
// of the head), starting from an empty state.
Result<Mat> TrunkStates(const Model& model, const std::vector<int32_t>& tokens, ReferenceTrace* trace) {
  const ModelConfig& c = model.config;
  const Weights& w = model.weights;
  const int64_t H = c.hidden;
  Mat h(tokens.size(), Vec(static_cast<size_t>(H)));
  std::vector<float> row(static_cast<size_t>(H));
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= c.vocab)
      return InvalidArgument("token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t) +
                             " is outside the vocabulary of " + std::to_string(c.vocab));
    DecodeToFloat(w.embed, static_cast<int64_t>(tokens[t]) * H, H, row.data());
    std::copy(row.begin(), row.end(), h[t].begin());
  }
  if (trace) {
    trace->layer_rms.clear();
    trace->experts.clear();
  }
  Selection selection;  // the latest full sparse layer's, for the shared layers above it
  std::vector<Mat> bank;  // Block AttnRes' checkpoints (K3)
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    std::vector<std::vector<int64_t>>* chosen = trace && c.moe_layer(l) ? &trace->experts.emplace_back() : nullptr;
    if (c.attn_res_block > 0) {  // spec latent-attention §2.5: mix, bank, mixer, restart, mix, FFN
      const Mat a = AttnResMix(c, bank, h, L.attn_res_score);
      const bool banked = l % c.attn_res_block == 0;
      if (banked) bank.push_back(h);
      const Mat y = Mixer(c, l, L, NormRows(a, L.input_norm, c.rms_eps), &selection);
      if (banked) h = y;
      else AddInPlace(h, y);
      AddInPlace(h, Ffn(c, l, L, NormRows(AttnResMix(c, bank, h, L.ffn_res_score), L.post_norm, c.rms_eps), chosen));
    } else {
      AddInPlace(h, Mixer(c, l, L, NormRows(h, L.input_norm, c.rms_eps), &selection));
      AddInPlace(h, Ffn(c, l, L, NormRows(h, L.post_norm, c.rms_eps), chosen));
    }
    if (trace) trace->layer_rms.push_back(MaxRms(h));
  }
  if (c.attn_res_block > 0) h = AttnResMix(c, bank, h, w.output_res_score);
  return NormRows(h, w.final_norm, c.rms_eps);
}

}  // namespace

Result<std::vector<std::vector<double>>> ReferenceForward(const Model& model,
                                                         const std::vector<int32_t>& tokens,
                                                         ReferenceTrace* trace) {
  LINEAGE_ASSIGN_OR_RETURN(Mat h, TrunkStates(model, tokens, trace));
  return MatMul(model.weights.lm_head, h);
}

Result<std::vector<std::vector<double>>> ReferenceMtpDrafts(const Model& model, const std::vector<int32_t>& tokens,
                                                           int64_t k) {
  const ModelConfig& c = model.config;
  const MtpWeights& m = model.weights.mtp;
  if (!c.mtp() || !m.valid()) return InvalidArgument("the model has no MTP block");
  if (tokens.size() < 2) return InvalidArgument("MTP drafts follow at least two tokens");
  const int64_t H = c.hidden, n = static_cast<int64_t>(tokens.size()) - 1;
  LINEAGE_ASSIGN_OR_RETURN(Mat h, TrunkStates(model, std::vector<int32_t>(tokens.begin(), tokens.end() - 1), nullptr));
  // The block's input row for a token and the state before it (none: zeros).
  std::vector<float> e(static_cast<size_t>(H));
  auto input = [&](int32_t token, const Vec* state) {
    Vec in(static_cast<size_t>(2 * H), 0.0);
    DecodeToFloat(model.weights.embed, static_cast<int64_t>(token) * H, H, e.data());
    std::copy(e.begin(), e.end(), in.begin());
    RmsNormInPlace(in.data(), H, m.enorm, c.rms_eps);
    if (state != nullptr) {
      std::copy(state->begin(), state->end(), in.begin() + H);
      RmsNormInPlace(in.data() + H, H, m.hnorm, c.rms_eps);
    }
    return in;
  };
  Mat in;
  for (int64_t j = 0; j <= n; ++j) in.push_back(input(tokens[static_cast<size_t>(j)], j > 0 ? &h[j - 1] : nullptr));
  std::vector<std::vector<double>> logits;
  for (int64_t d = 0; d < k; ++d) {
    // The whole block over rows [0, n + d] (causal: earlier rows' outputs do not change).
    Mat x = MatMul(m.eh_proj, in);
    const LayerWeights& L = m.layer;
    AddInPlace(x, Mixer(c, c.num_layers, L, NormRows(x, L.input_norm, c.rms_eps), nullptr));
    AddInPlace(x, Ffn(c, c.num_layers, L, NormRows(x, L.post_norm, c.rms_eps), nullptr));
    const Mat last = NormRows(Mat{x.back()}, m.head_norm, c.rms_eps);
    logits.push_back(MatMul(model.weights.lm_head, last)[0]);
    const Vec& row = logits.back();
    const int32_t draft = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    in.push_back(input(draft, &last[0]));
  }
  return logits;
}

}  // namespace lineage::model
