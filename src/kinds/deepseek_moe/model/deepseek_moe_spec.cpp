// The DeepSeek-V3 MoE's tensors (layer_kinds.h).
#include "core/tensor_slice.h"
#include "kinds/moe/moe_tensors.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::deepseek_moe {
namespace {

using namespace model;
using moe::kShDown;
using moe::kShGate;
using moe::kShUp;

// This kind's roles (layer_kinds.h).
constexpr Role kRouterBias = FfnRole(FfnKind::kDeepseekMoe, 0);
constexpr Role kMoeLatentDown = FfnRole(FfnKind::kDeepseekMoe, 1);
constexpr Role kMoeLatentUp = FfnRole(FfnKind::kDeepseekMoe, 2);
constexpr Role kMoeLatentNorm = FfnRole(FfnKind::kDeepseekMoe, 3);

// The DeepSeek-V3 MoE (spec §7.4; latent-attention §1.7, K3's latent form
// §2.3) with its routed experts one 2-D tensor per expert (HF) or stacked
// (GGUF).
void PlanDeepseekMoe(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, E = c.experts.count, Ie = c.experts.width;
  const int64_t Is = c.experts.shared_width;
  const int64_t X = c.experts.latent > 0 ? c.experts.latent : H;  // the routed experts' input width
  // Kimi's checkpoints name the MoE block_sparse_moe (experts w1 / w3 / w2);
  // DeepSeek's and GLM's name it mlp (experts gate_proj / up_proj / down_proj).
  const bool kimi_names = KimiNamed(c.arch);
  const std::string m = kimi_names ? "block_sparse_moe." : "mlp.";
  p.Add(Role::kRouter, l, m + "gate.weight", "ffn_gate_inp.weight", {E, H}, Values::kF32Matrix);
  p.Add(kRouterBias, l, m + "gate.e_score_correction_bias", "exp_probs_b.bias", {E}, Values::kScores);
  if (c.experts.latent > 0) {  // K3: the experts run in a latent of X
    p.Add(kMoeLatentDown, l, m + "routed_expert_down_proj.weight", "ffn_routed_down.weight", {X, H});
  }
  if (c.format == FileFormat::kGguf) {
    p.AddOwn(Role::kExpGate, l, -1, "ffn_gate_exps.weight", {E, Ie, X});
    p.AddOwn(Role::kExpUp, l, -1, "ffn_up_exps.weight", {E, Ie, X});
    p.AddOwn(Role::kExpDown, l, -1, "ffn_down_exps.weight", {E, X, Ie});
  } else {
    for (int64_t e = 0; e < E; ++e) {
      const std::string x = m + "experts." + std::to_string(e) + ".";
      p.AddOwn(Role::kExpGate, l, e, x + (kimi_names ? "w1.weight" : "gate_proj.weight"), {Ie, X});
      p.AddOwn(Role::kExpUp, l, e, x + (kimi_names ? "w3.weight" : "up_proj.weight"), {Ie, X});
      p.AddOwn(Role::kExpDown, l, e, x + (kimi_names ? "w2.weight" : "down_proj.weight"), {X, Ie});
    }
  }
  if (c.experts.latent > 0) {
    p.Add(kMoeLatentNorm, l, m + "routed_expert_norm.weight", "ffn_routed_norm.weight", {X}, Values::kPlainNorm);
    p.Add(kMoeLatentUp, l, m + "routed_expert_up_proj.weight", "ffn_routed_up.weight", {H, X});
  }
  p.Add(kShGate, l, m + "shared_experts.gate_proj.weight", "ffn_gate_shexp.weight", {Is, H});
  p.Add(kShUp, l, m + "shared_experts.up_proj.weight", "ffn_up_shexp.weight", {Is, H});
  p.Add(kShDown, l, m + "shared_experts.down_proj.weight", "ffn_down_shexp.weight", {H, Is});
}

// A kimi routed-expert tensor: one expert's matrix (HF) or all experts
// stacked (GGUF), sliced per expert into moe.
void BindKimiExpert(const ModelConfig& c, const PlannedTensor& p, const TensorView& v, MoeWeights* moe) {
  const int64_t E = c.experts.count;
  moe->gate.resize(static_cast<size_t>(E));
  moe->up.resize(static_cast<size_t>(E));
  moe->down.resize(static_cast<size_t>(E));
  std::vector<TensorView>& dst = p.role == Role::kExpGate ? moe->gate : p.role == Role::kExpUp ? moe->up : moe->down;
  if (p.expert >= 0) {
    dst[p.expert] = v;
    return;
  }
  const int64_t rows = p.gguf_shape[1];
  for (int64_t e = 0; e < E; ++e) dst[e] = RowSlice(v, e * rows, rows, ExpertSuffix(e));
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  MoeWeights& m = w.moe;
  switch (t.plan.role) {
    case kRouterBias: m.score_bias = std::move(t.small); return true;
    case Role::kExpGate: case Role::kExpUp: case Role::kExpDown: BindKimiExpert(t.c, t.plan, t.view, &m); return true;
    case kMoeLatentDown: m.latent_down = t.view; return true;
    case kMoeLatentUp: m.latent_up = t.view; return true;
    case kMoeLatentNorm: m.latent_norm = std::move(t.small); return true;
    default: return moe::BindRouterAndSharedExpert(t, m);
  }
}


}  // namespace

extern const model::KindConfig kConfig;  // its hyperparameters (deepseek_moe_config.cpp)
extern const model::FfnKindInfo kModelSpec{"deepseek-moe", {PlanDeepseekMoe, Bind, nullptr}, &kConfig};

}  // namespace lineage::kinds::deepseek_moe
