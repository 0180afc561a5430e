// Kimi Delta Attention's tensors and sizes (layer_kinds.h).
#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::kda {
namespace {

using namespace model;

// Kimi Delta Attention (spec §7.2, §7.5; K3 latent-attention §2.1).
void PlanKda(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t nh = c.lin_num_k_heads, d = c.lin_k_dim, inner = nh * d, K = c.conv_kernel;
  p.Add(Role::kKdaQ, l, "self_attn.q_proj.weight", "attn_q.weight", {inner, H});
  p.Add(Role::kKdaK, l, "self_attn.k_proj.weight", "attn_k.weight", {inner, H});
  p.Add(Role::kKdaV, l, "self_attn.v_proj.weight", "attn_v.weight", {inner, H});
  p.Add(Role::kKdaQConv, l, "self_attn.q_conv1d.weight", {inner, 1, K}, "ssm_conv1d_q.weight", {1, inner, 1, K});
  p.Add(Role::kKdaKConv, l, "self_attn.k_conv1d.weight", {inner, 1, K}, "ssm_conv1d_k.weight", {1, inner, 1, K});
  p.Add(Role::kKdaVConv, l, "self_attn.v_conv1d.weight", {inner, 1, K}, "ssm_conv1d_v.weight", {1, inner, 1, K});
  p.Add(Role::kKdaFA, l, "self_attn.f_a_proj.weight", "ssm_f_a.weight", {d, H});
  p.Add(Role::kKdaFB, l, "self_attn.f_b_proj.weight", "ssm_f_b.weight", {inner, d});
  p.Add(Role::kKdaB, l, "self_attn.b_proj.weight", "ssm_beta.weight", {nh, H});
  if (c.arch == Arch::kKimiK3) {  // 1-D in K3's files
    p.Add(Role::kKdaALog, l, "self_attn.A_log", {nh}, "ssm_a", {nh});
  } else {
    p.Add(Role::kKdaALog, l, "self_attn.A_log", {1, 1, nh, 1}, "ssm_a", {1, 1, nh, 1});
  }
  p.Add(Role::kKdaDtBias, l, "self_attn.dt_bias", "ssm_dt.bias", {inner});
  if (c.arch == Arch::kKimiK3) {
    p.Add(Role::kKdaGFull, l, "self_attn.g_proj.weight", "ssm_g.weight", {inner, H});
  } else {
    p.Add(Role::kKdaGA, l, "self_attn.g_a_proj.weight", "ssm_g_a.weight", {d, H});
    p.Add(Role::kKdaGB, l, "self_attn.g_b_proj.weight", "ssm_g_b.weight", {inner, d});
  }
  p.Add(Role::kKdaNorm, l, "self_attn.o_norm.weight", "ssm_norm.weight", {d});
  p.Add(Role::kKdaOut, l, "self_attn.o_proj.weight", "attn_output.weight", {H, inner});
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  KdaWeights& k = w.kda;
  switch (t.plan.role) {
    case Role::kKdaQ: k.q_proj = t.view; return true;
    case Role::kKdaK: k.k_proj = t.view; return true;
    case Role::kKdaV: k.v_proj = t.view; return true;
    case Role::kKdaQConv: case Role::kKdaKConv: case Role::kKdaVConv:  // planned q, k, v in order
      k.conv.insert(k.conv.end(), t.small.begin(), t.small.end());
      return true;
    case Role::kKdaFA: k.f_a = t.view; return true;
    case Role::kKdaFB: k.f_b = t.view; return true;
    case Role::kKdaB: k.b_proj = t.view; return true;
    case Role::kKdaALog: k.ssm_a = std::move(t.small); return true;
    case Role::kKdaDtBias: k.dt_bias = std::move(t.small); return true;
    case Role::kKdaGA: k.g_a = t.view; return true;
    case Role::kKdaGB: k.g_b = t.view; return true;
    case Role::kKdaGFull: k.g_full = t.view; return true;
    case Role::kKdaNorm: k.norm = std::move(t.small); return true;
    case Role::kKdaOut: k.o_proj = t.view; return true;
    default: return false;
  }
}


}  // namespace

extern const model::MixerKindInfo kModelSpec{"kda", true, NoKvRows, DeltaStateFloats, {PlanKda, Bind, nullptr}};

}  // namespace lineage::kinds::kda
