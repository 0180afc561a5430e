// Gated DeltaNet's tensors and sizes (layer_kinds.h).
#include "core/tensor_slice.h"
#include "kinds/gated_deltanet/gdn_roles.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::gated_deltanet {
namespace {

using namespace model;

// Gated DeltaNet (spec §2.1, §5.2): separate input projections, or
// Qwen3-Next's fused ones.
void PlanGdn(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t key_dim = c.delta.k_heads * c.delta.k_dim;
  const int64_t value_dim = c.delta.v_heads * c.delta.v_dim;
  const int64_t conv_dim = 2 * key_dim + value_dim;
  const int64_t Hv = c.delta.v_heads, K = c.delta.conv_kernel;
  if (c.arch != Arch::kQwen3Next) {
    p.Add(kLinQkv, l, "linear_attn.in_proj_qkv.weight", "attn_qkv.weight", {conv_dim, H});
    p.Add(kLinZ, l, "linear_attn.in_proj_z.weight", "attn_gate.weight", {value_dim, H});
    p.Add(kLinB, l, "linear_attn.in_proj_b.weight", "ssm_beta.weight", {Hv, H});
    p.Add(kLinA, l, "linear_attn.in_proj_a.weight", "ssm_alpha.weight", {Hv, H});
  } else if (c.format == FileFormat::kSafetensors) {
    p.Add(kLinQkvz, l, "linear_attn.in_proj_qkvz.weight", "-", {conv_dim + value_dim, H});
    p.Add(kLinBa, l, "linear_attn.in_proj_ba.weight", "ssm_ba.weight", {2 * Hv, H});
  } else {
    // The converter un-interleaves qkvz into attn_qkv and attn_gate (both
    // cut from the HF in_proj_qkvz) and keeps ba grouped (spec §5.2).
    p.Add(kLinQkv, l, "linear_attn.in_proj_qkvz.weight", {conv_dim, H}, "attn_qkv.weight", {conv_dim, H});
    p.Add(kLinZ, l, "linear_attn.in_proj_qkvz.weight", {value_dim, H}, "attn_gate.weight", {value_dim, H});
    p.Add(kLinBa, l, "linear_attn.in_proj_ba.weight", "ssm_ba.weight", {2 * Hv, H});
  }
  p.Add(kLinConv, l, "linear_attn.conv1d.weight", {conv_dim, 1, K}, "ssm_conv1d.weight", {conv_dim, K}, Values::kVector);
  p.Add(kLinDtBias, l, "linear_attn.dt_bias", "ssm_dt.bias", {Hv}, Values::kDtBias);
  p.Add(kLinALog, l, "linear_attn.A_log", "ssm_a", {Hv}, Values::kALog);
  p.Add(kLinNorm, l, "linear_attn.norm.weight", "ssm_norm.weight", {c.delta.v_dim}, Values::kPlainNorm);
  p.Add(kLinOut, l, "linear_attn.out_proj.weight", "ssm_out.weight", {H, value_dim}, Values::kOutMatrix);
}

// Qwen3-Next's input projections as row blocks (weights.h): q, k, v and z
// of key group g sit at rows g * (2 d_k + 2 r d_v) of in_proj_qkvz, b and a
// at rows g * 2r of in_proj_ba (spec §2.1).
void BuildGdnBlocks(const ModelConfig& c, LinearAttentionWeights* w) {
  const int64_t Hk = c.delta.k_heads, dk = c.delta.k_dim, dv = c.delta.v_dim, r = c.delta.v_heads / Hk;
  const int64_t key_dim = Hk * dk;
  auto& b = w->in_blocks;
  if (w->in_proj_qkvz.valid()) {
    const int64_t group = 2 * dk + 2 * r * dv;
    for (int64_t g = 0; g < Hk; ++g) {
      const int64_t base = g * group;
      // q, k and v feed the delta rule's state (WithWideActivations), z only its output.
      b.push_back({WithWideActivations(RowSlice(w->in_proj_qkvz, base, dk, "")), GdnInput::kQkv, g * dk});
      b.push_back({WithWideActivations(RowSlice(w->in_proj_qkvz, base + dk, dk, "")), GdnInput::kQkv,
                   key_dim + g * dk});
      b.push_back({WithWideActivations(RowSlice(w->in_proj_qkvz, base + 2 * dk, r * dv, "")), GdnInput::kQkv,
                   2 * key_dim + g * r * dv});
      b.push_back({RowSlice(w->in_proj_qkvz, base + 2 * dk + r * dv, r * dv, ""), GdnInput::kZ, g * r * dv});
    }
  } else {
    b.push_back({w->in_proj_qkv, GdnInput::kQkv, 0});
    b.push_back({w->in_proj_z, GdnInput::kZ, 0});
  }
  if (w->in_proj_ba.valid()) {
    for (int64_t g = 0; g < Hk; ++g) {
      b.push_back({RowSlice(w->in_proj_ba, g * 2 * r, r, ""), GdnInput::kB, g * r});
      b.push_back({RowSlice(w->in_proj_ba, g * 2 * r + r, r, ""), GdnInput::kA, g * r});
    }
  } else {
    b.push_back({w->in_proj_b, GdnInput::kB, 0});
    b.push_back({w->in_proj_a, GdnInput::kA, 0});
  }
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  LinearAttentionWeights& g = w.linear;
  switch (t.plan.role) {
    case kLinQkv: g.in_proj_qkv = WithWideActivations(t.view); return true;  // the delta rule's inputs
    case kLinZ: g.in_proj_z = t.view; return true;
    case kLinB: g.in_proj_b = t.view; return true;
    case kLinA: g.in_proj_a = t.view; return true;
    case kLinQkvz: g.in_proj_qkvz = t.view; return true;
    case kLinBa: g.in_proj_ba = t.view; return true;
    case kLinConv: g.conv = std::move(t.small); return true;
    case kLinDtBias: g.dt_bias = std::move(t.small); return true;
    case kLinALog: g.ssm_a = std::move(t.small); return true;
    case kLinNorm: g.norm = std::move(t.small); return true;
    case kLinOut: g.out_proj = WithWideActivations(t.view); return true;  // the state's read-out
    default: return false;
  }
}

Status Finish(const LayerBinder& b, LayerWeights& w) {
  if (b.c.arch == Arch::kQwen3Next) BuildGdnBlocks(b.c, &w.linear);
  return Status::Ok();
}


}  // namespace

extern const model::KindConfig kConfig;  // its hyperparameters (gated_deltanet_config.cpp)
extern const model::MixerKindInfo kModelSpec{"gated-deltanet", true, NoKvRows, DeltaStateFloats, {PlanGdn, Bind, Finish},
                                             &kConfig};

}  // namespace lineage::kinds::gated_deltanet
