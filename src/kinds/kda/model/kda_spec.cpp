// Kimi Delta Attention's tensors and sizes (layer_kinds.h).
#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::kda {
namespace {

using namespace model;

// This kind's roles (layer_kinds.h).
constexpr Role kKdaQ = MixerRole(MixerKind::kKimiDelta, 0);
constexpr Role kKdaK = MixerRole(MixerKind::kKimiDelta, 1);
constexpr Role kKdaV = MixerRole(MixerKind::kKimiDelta, 2);
constexpr Role kKdaQConv = MixerRole(MixerKind::kKimiDelta, 3);
constexpr Role kKdaKConv = MixerRole(MixerKind::kKimiDelta, 4);
constexpr Role kKdaVConv = MixerRole(MixerKind::kKimiDelta, 5);
constexpr Role kKdaFA = MixerRole(MixerKind::kKimiDelta, 6);
constexpr Role kKdaFB = MixerRole(MixerKind::kKimiDelta, 7);
constexpr Role kKdaB = MixerRole(MixerKind::kKimiDelta, 8);
constexpr Role kKdaALog = MixerRole(MixerKind::kKimiDelta, 9);
constexpr Role kKdaDtBias = MixerRole(MixerKind::kKimiDelta, 10);
constexpr Role kKdaGA = MixerRole(MixerKind::kKimiDelta, 11);
constexpr Role kKdaGB = MixerRole(MixerKind::kKimiDelta, 12);
constexpr Role kKdaNorm = MixerRole(MixerKind::kKimiDelta, 13);
constexpr Role kKdaOut = MixerRole(MixerKind::kKimiDelta, 14);
constexpr Role kKdaGFull = MixerRole(MixerKind::kKimiDelta, 15);

// Kimi Delta Attention (spec §7.2, §7.5; K3 latent-attention §2.1).
void PlanKda(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t nh = c.delta.k_heads, d = c.delta.k_dim, inner = nh * d, K = c.delta.conv_kernel;
  p.Add(kKdaQ, l, "self_attn.q_proj.weight", "attn_q.weight", {inner, H});
  p.Add(kKdaK, l, "self_attn.k_proj.weight", "attn_k.weight", {inner, H});
  p.Add(kKdaV, l, "self_attn.v_proj.weight", "attn_v.weight", {inner, H});
  p.Add(kKdaQConv, l, "self_attn.q_conv1d.weight", {inner, 1, K}, "ssm_conv1d_q.weight", {1, inner, 1, K}, Values::kVector);
  p.Add(kKdaKConv, l, "self_attn.k_conv1d.weight", {inner, 1, K}, "ssm_conv1d_k.weight", {1, inner, 1, K}, Values::kVector);
  p.Add(kKdaVConv, l, "self_attn.v_conv1d.weight", {inner, 1, K}, "ssm_conv1d_v.weight", {1, inner, 1, K}, Values::kVector);
  p.Add(kKdaFA, l, "self_attn.f_a_proj.weight", "ssm_f_a.weight", {d, H});
  p.Add(kKdaFB, l, "self_attn.f_b_proj.weight", "ssm_f_b.weight", {inner, d});
  p.Add(kKdaB, l, "self_attn.b_proj.weight", "ssm_beta.weight", {nh, H});
  if (c.arch == Arch::kKimiK3) {  // 1-D in K3's files
    p.Add(kKdaALog, l, "self_attn.A_log", {nh}, "ssm_a", {nh}, Values::kALog);
  } else {
    p.Add(kKdaALog, l, "self_attn.A_log", {1, 1, nh, 1}, "ssm_a", {1, 1, nh, 1}, Values::kALog);
  }
  p.Add(kKdaDtBias, l, "self_attn.dt_bias", "ssm_dt.bias", {inner}, Values::kDtBias);
  if (c.arch == Arch::kKimiK3) {
    p.Add(kKdaGFull, l, "self_attn.g_proj.weight", "ssm_g.weight", {inner, H});
  } else {
    p.Add(kKdaGA, l, "self_attn.g_a_proj.weight", "ssm_g_a.weight", {d, H});
    p.Add(kKdaGB, l, "self_attn.g_b_proj.weight", "ssm_g_b.weight", {inner, d});
  }
  p.Add(kKdaNorm, l, "self_attn.o_norm.weight", "ssm_norm.weight", {d}, Values::kPlainNorm);
  p.Add(kKdaOut, l, "self_attn.o_proj.weight", "attn_output.weight", {H, inner}, Values::kOutMatrix);
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  KdaWeights& k = w.kda;
  switch (t.plan.role) {
    case kKdaQ: k.q_proj = WithWideActivations(t.view); return true;  // the delta rule's inputs
    case kKdaK: k.k_proj = WithWideActivations(t.view); return true;
    case kKdaV: k.v_proj = WithWideActivations(t.view); return true;
    case kKdaQConv: case kKdaKConv: case kKdaVConv:  // planned q, k, v in order
      k.conv.insert(k.conv.end(), t.small.begin(), t.small.end());
      return true;
    case kKdaFA: k.f_a = t.view; return true;
    case kKdaFB: k.f_b = t.view; return true;
    case kKdaB: k.b_proj = t.view; return true;
    case kKdaALog: k.ssm_a = std::move(t.small); return true;
    case kKdaDtBias: k.dt_bias = std::move(t.small); return true;
    case kKdaGA: k.g_a = t.view; return true;
    case kKdaGB: k.g_b = t.view; return true;
    case kKdaGFull: k.g_full = t.view; return true;
    case kKdaNorm: k.norm = std::move(t.small); return true;
    case kKdaOut: k.o_proj = WithWideActivations(t.view); return true;  // the state's read-out
    default: return false;
  }
}


}  // namespace

extern const model::KindConfig kConfig;  // its hyperparameters (kda_config.cpp)
extern const model::MixerKindInfo kModelSpec{"kda", true, NoKvRows, DeltaStateFloats, {PlanKda, Bind, nullptr}, &kConfig};

}  // namespace lineage::kinds::kda
