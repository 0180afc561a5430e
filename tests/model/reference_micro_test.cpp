// The reference forward against values derived independently here, on
// one-layer micro models and two tokens, where the recurrence and causal
// attention have closed forms:
//   GDN, from zero state: S0 = b0 k0 v0^T, so
//     o0 = b0 (k0.q0) v0
//     o1 = e^g1 b0 (k0.q1) v0 + b1 (k1.q1) (v1 - e^g1 b0 (k0.k1) v0)
//   attention: o0 = v0; o1 = softmax(q1.k0, q1.k1) . (v0, v1), with RoPE
//     the identity at position 0 and a rotation by 1 * inv_freq at 1.
// Weights are the raw HF tensors (FillRandom); the HF conventions (1 + w
// norms, -exp(A_log)) are applied here, so the loader's folding is checked too.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "model/tensor_plan.h"

namespace lineage::model {
namespace {

using V = std::vector<double>;
constexpr uint64_t kSeed = 99;
constexpr double kEps = 1e-6;

std::map<std::string, V> RawTensors(const ModelConfig& c) {
  std::map<std::string, V> raw;
  for (const PlannedTensor& p : PlanTensors(c)) {
    int64_t n = 1;
    for (int64_t d : p.hf_shape) n *= d;
    std::vector<float> f(static_cast<size_t>(n));
    FillRandom(c.arch, p, kSeed, 0, n, f.data());
    std::string key = p.hf_name;  // without "model.language_model." and "layers.0."
    for (const std::string prefix : {"model.language_model.", "layers.0."})
      if (key.rfind(prefix, 0) == 0) key = key.substr(prefix.size());
    raw[key] = V(f.begin(), f.end());
  }
  return raw;
}

// W [rows, cols] row-major times x.
V Mul(const V& w, const V& x) {
  const size_t cols = x.size(), rows = w.size() / cols;
  V y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < cols; ++i) y[r] += w[r * cols + i] * x[i];
  return y;
}
V Slice(const V& x, size_t at, size_t n) { return V(x.begin() + at, x.begin() + at + n); }
double Dot(const V& a, const V& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
V Axpy(double a, const V& x, const V& y) {  // a x + y
  V out(y);
  for (size_t i = 0; i < x.size(); ++i) out[i] += a * x[i];
  return out;
}
V Scale(double a, const V& x) { return Axpy(a, x, V(x.size(), 0.0)); }
V Rms(const V& x, const V& scale) {
  const double inv = 1.0 / std::sqrt(Dot(x, x) / x.size() + kEps);
  V y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * scale[i];
  return y;
}
// Weights binds conventions into fp32 vectors (weights.h), so fold in fp32 too.
V OnePlus(const V& w) {
  V y(w);
  for (double& e : y) e = 1.0f + static_cast<float>(e);
  return y;
}
double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Silu(double x) { return x * Sig(x); }
V Unit(const V& x) { return Scale(1.0 / std::sqrt(Dot(x, x) + 1e-6), x); }

V Embed(const std::map<std::string, V>& w, int tok, size_t H) { return Slice(w.at("embed_tokens.weight"), tok * H, H); }

V Ffn(const std::map<std::string, V>& w, const V& x) {
  V g = Mul(w.at("mlp.gate_proj.weight"), x), u = Mul(w.at("mlp.up_proj.weight"), x);
  for (size_t i = 0; i < g.size(); ++i) g[i] = Silu(g[i]) * u[i];
  return Mul(w.at("mlp.down_proj.weight"), g);
}

void ExpectClose(const std::vector<std::vector<double>>& got, const std::vector<V>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t t = 0; t < want.size(); ++t)
    for (size_t i = 0; i < want[t].size(); ++i)
      EXPECT_NEAR(got[t][i], want[t][i], 1e-10 * (1 + std::fabs(want[t][i]))) << "position " << t << " logit " << i;
}

TEST(ReferenceMicro, GatedDeltaNetLayerMatchesClosedForm) {
  ModelSpec spec;
  spec.shape = "micro-gdn";
  ModelConfig& c = spec.config;
  c.arch = Arch::kQwen3_5;
  c.hidden = 8; c.num_layers = 1; c.intermediate = 8; c.vocab = 16; c.tied_embeddings = true;
  c.num_heads = 1; c.num_kv_heads = 1; c.head_dim = 4; c.rope_dims = 2; c.attn_output_gate = true;
  c.delta.k_heads = 2; c.delta.v_heads = 4; c.delta.k_dim = 4; c.delta.v_dim = 4; c.delta.conv_kernel = 4;
  c.layers = {{MixerKind::kGatedDeltaNet, FfnKind::kDense}};
  auto model = MakeRandomModel(spec, DType::kF32, kSeed);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const auto w = RawTensors(c);
  const std::vector<int32_t> tokens = {3, 11};
  const size_t H = 8, dk = 4, dv = 4, Hk = 2, Hv = 4, K = 4, key_dim = Hk * dk;

  V x[2], mixed[2], z[2], b[2], a[2], h[2];
  for (int t = 0; t < 2; ++t) {
    h[t] = Embed(w, tokens[t], H);
    x[t] = Rms(h[t], OnePlus(w.at("input_layernorm.weight")));
    mixed[t] = Mul(w.at("linear_attn.in_proj_qkv.weight"), x[t]);
    z[t] = Mul(w.at("linear_attn.in_proj_z.weight"), x[t]);
    b[t] = Mul(w.at("linear_attn.in_proj_b.weight"), x[t]);
    a[t] = Mul(w.at("linear_attn.in_proj_a.weight"), x[t]);
  }
  // Conv at t: taps K-1 (current) and K-2 (previous); earlier inputs are zero.
  const V& cw = w.at("linear_attn.conv1d.weight");
  V y[2] = {V(mixed[0].size()), V(mixed[0].size())};
  for (size_t ch = 0; ch < mixed[0].size(); ++ch) {
    y[0][ch] = Silu(cw[ch * K + 3] * mixed[0][ch]);
    y[1][ch] = Silu(cw[ch * K + 2] * mixed[0][ch] + cw[ch * K + 3] * mixed[1][ch]);
  }
  V out[2] = {V(Hv * dv), V(Hv * dv)};
  for (size_t hv = 0; hv < Hv; ++hv) {
    const size_t kh = hv / (Hv / Hk);  // HF: grouped value heads
    V q[2], k[2], v[2];
    double beta[2], g[2];
    for (int t = 0; t < 2; ++t) {
      q[t] = Scale(0.5, Unit(Slice(y[t], kh * dk, dk)));  // 1/sqrt(d_k) = 0.5
      k[t] = Unit(Slice(y[t], key_dim + kh * dk, dk));
      v[t] = Slice(y[t], 2 * key_dim + hv * dv, dv);
      beta[t] = Sig(b[t][hv]);
      const float a_coef = -std::exp(static_cast<float>(w.at("linear_attn.A_log")[hv]));
      g[t] = a_coef *
             std::log1p(std::exp(a[t][hv] + w.at("linear_attn.dt_bias")[hv]));
    }
    const double e1 = std::exp(g[1]);
    V o0 = Scale(beta[0] * Dot(k[0], q[0]), v[0]);
    V resid = Axpy(-e1 * beta[0] * Dot(k[0], k[1]), v[0], v[1]);
    V o1 = Axpy(e1 * beta[0] * Dot(k[0], q[1]), v[0], Scale(beta[1] * Dot(k[1], q[1]), resid));
    V os[2] = {o0, o1};
    for (int t = 0; t < 2; ++t) {
      V n = Rms(os[t], w.at("linear_attn.norm.weight"));  // plain weight
      for (size_t j = 0; j < dv; ++j) out[t][hv * dv + j] = n[j] * Silu(z[t][hv * dv + j]);
    }
  }
  std::vector<V> logits;
  for (int t = 0; t < 2; ++t) {
    h[t] = Axpy(1.0, Mul(w.at("linear_attn.out_proj.weight"), out[t]), h[t]);
    h[t] = Axpy(1.0, Ffn(w, Rms(h[t], OnePlus(w.at("post_attention_layernorm.weight")))), h[t]);
    logits.push_back(Mul(w.at("embed_tokens.weight"), Rms(h[t], OnePlus(w.at("norm.weight")))));
  }
  auto got = ReferenceForward(**model, tokens);
  ASSERT_TRUE(got.ok());
  ExpectClose(*got, logits);
}

TEST(ReferenceMicro, GatedAttentionLayerMatchesClosedForm) {
  ModelSpec spec;
  spec.shape = "micro-attn";
  ModelConfig& c = spec.config;
  c.arch = Arch::kQwen3_5;
  c.hidden = 8; c.num_layers = 1; c.intermediate = 8; c.vocab = 16; c.tied_embeddings = false;
  c.num_heads = 2; c.num_kv_heads = 1; c.head_dim = 8; c.rope_dims = 4; c.attn_output_gate = true;
  c.rope_theta = 1e7;
  c.layers = {{MixerKind::kAttention, FfnKind::kDense}};
  auto model = MakeRandomModel(spec, DType::kF32, kSeed);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const auto w = RawTensors(c);
  const std::vector<int32_t> tokens = {5, 9};
  const size_t H = 8, hd = 8, nh = 2;

  V h[2], q[2][2], gate[2][2], k[2], v[2];
  for (int t = 0; t < 2; ++t) {
    h[t] = Embed(w, tokens[t], H);
    V x = Rms(h[t], OnePlus(w.at("input_layernorm.weight")));
    V qg = Mul(w.at("self_attn.q_proj.weight"), x);  // per head [q (8) | gate (8)]
    for (size_t hh = 0; hh < nh; ++hh) {
      q[t][hh] = Rms(Slice(qg, hh * 2 * hd, hd), OnePlus(w.at("self_attn.q_norm.weight")));
      gate[t][hh] = Slice(qg, hh * 2 * hd + hd, hd);
    }
    k[t] = Rms(Mul(w.at("self_attn.k_proj.weight"), x), OnePlus(w.at("self_attn.k_norm.weight")));
    v[t] = Mul(w.at("self_attn.v_proj.weight"), x);
  }
  // RoPE at position 1 over dims [0, 4): pairs (0, 2) and (1, 3), inv_freq = theta^(-i/2).
  auto rotate = [&](V& r) {
    for (size_t i = 0; i < 2; ++i) {
      const double ang = std::pow(1e7, -static_cast<double>(i) / 2.0);
      const double x1 = r[i], x2 = r[i + 2];
      r[i] = x1 * std::cos(ang) - x2 * std::sin(ang);
      r[i + 2] = x2 * std::cos(ang) + x1 * std::sin(ang);
    }
  };
  rotate(k[1]);
  std::vector<V> logits;
  for (int t = 0; t < 2; ++t) {
    V att(nh * hd);
    for (size_t hh = 0; hh < nh; ++hh) {
      V o;
      if (t == 0) {
        o = v[0];
      } else {
        V qr = q[1][hh];
        rotate(qr);
        const double s0 = Dot(qr, k[0]) / std::sqrt(8.0), s1 = Dot(qr, k[1]) / std::sqrt(8.0);
        const double p0 = 1.0 / (1.0 + std::exp(s1 - s0));
        o = Axpy(p0, v[0], Scale(1.0 - p0, v[1]));
      }
      for (size_t i = 0; i < hd; ++i) att[hh * hd + i] = o[i] * Sig(gate[t][hh][i]);
    }
    h[t] = Axpy(1.0, Mul(w.at("self_attn.o_proj.weight"), att), h[t]);
    h[t] = Axpy(1.0, Ffn(w, Rms(h[t], OnePlus(w.at("post_attention_layernorm.weight")))), h[t]);
    logits.push_back(Mul(w.at("lm_head.weight"), Rms(h[t], OnePlus(w.at("norm.weight")))));
  }
  auto got = ReferenceForward(**model, tokens);
  ASSERT_TRUE(got.ok());
  ExpectClose(*got, logits);
}

}  // namespace
}  // namespace lineage::model
