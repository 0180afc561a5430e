// The Qwen MoE's tensors (layer_kinds.h); the routed experts in whichever
// layout the file has.
#include "kinds/moe/moe_tensors.h"

#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::moe {
namespace {

using namespace model;

// This kind's roles (layer_kinds.h).
constexpr Role kShGateInp = FfnRole(FfnKind::kMoe, 0);

// The Qwen MoE (spec §4.3): the router, the routed experts in the file's
// layout, the shared expert and its gate.
void PlanMoe(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, E = c.experts.count, Is = c.experts.shared_width;
  p.Add(Role::kRouter, l, "mlp.gate.weight", "ffn_gate_inp.weight", {E, H}, Values::kF32Matrix);
  for (PlannedTensor& t : PlanExperts(c, l, DefaultExpertLayout(c), c.format)) p.out.push_back(std::move(t));
  p.Add(kShGate, l, "mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight", {Is, H});
  p.Add(kShUp, l, "mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight", {Is, H});
  p.Add(kShDown, l, "mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight", {H, Is});
  p.Add(kShGateInp, l, "mlp.shared_expert_gate.weight", {1, H}, "ffn_gate_inp_shexp.weight", {H}, Values::kVector);
}

// The routed experts of MoE layer `l`, from whichever layout the file has
// (tensor_plan.h). The expert count and widths come from the config; a
// tensor holding another number of experts is an error naming both.
Status BindExperts(const ModelConfig& c, int64_t l, const TensorLookup& lookup, MoeWeights* moe) {
  const int64_t E = c.experts.count, I = c.experts.width;
  std::string first_missing;
  for (ExpertLayout layout : {DefaultExpertLayout(c), ExpertLayout::kStacked, ExpertLayout::kMergedGateUp,
                              ExpertLayout::kPerExpert}) {
    const std::vector<PlannedTensor> plan = PlanExperts(c, l, layout, c.format);
    if (plan.empty()) continue;
    auto probe = lookup(plan.front().gguf_name);
    if (!probe.ok()) {
      if (first_missing.empty()) first_missing = probe.status().message();
      continue;
    }
    moe->gate.assign(static_cast<size_t>(E), {});
    moe->up.assign(static_cast<size_t>(E), {});
    moe->down.assign(static_cast<size_t>(E), {});
    for (const PlannedTensor& p : plan) {
      LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(p.gguf_name));
      if (p.expert < 0 && f.view.shape.size() == 3 && f.view.shape[0] != E && f.view.shape[1] == p.gguf_shape[1] &&
          f.view.shape[2] == p.gguf_shape[2])
        return ExpertCountError(f, p.gguf_name, E);
      LINEAGE_ASSIGN_OR_RETURN(TensorView v, FetchPlanned(c, p, lookup));
      const int64_t rows = p.gguf_shape[p.gguf_shape.size() - 2];
      for (int64_t e = 0; e < E; ++e) {
        if (p.expert >= 0 && p.expert != e) continue;
        const int64_t base = p.expert >= 0 ? 0 : e * rows;
        switch (p.role) {
          case Role::kExpGate: moe->gate[e] = RowSlice(v, base, rows, p.expert >= 0 ? "" : ExpertSuffix(e)); break;
          case Role::kExpUp: moe->up[e] = RowSlice(v, base, rows, p.expert >= 0 ? "" : ExpertSuffix(e)); break;
          case Role::kExpDown: moe->down[e] = RowSlice(v, base, rows, p.expert >= 0 ? "" : ExpertSuffix(e)); break;
          case Role::kExpGateUp:  // gate is the first half of each expert's rows, up the second
            moe->gate[e] = RowSlice(v, base, I, ExpertSuffix(e) + "[gate]");
            moe->up[e] = RowSlice(v, base + I, I, ExpertSuffix(e) + "[up]");
            break;
          default: break;
        }
      }
    }
    return Status::Ok();
  }
  return NotFound(first_missing + " (no routed-expert tensors of MoE layer " + std::to_string(l) + " in any layout)");
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  if (t.plan.role != kShGateInp) return BindRouterAndSharedExpert(t, w.moe);
  w.moe.shared_gate_inp = std::move(t.small);
  return true;
}

Status Finish(const LayerBinder& b, LayerWeights& w) { return BindExperts(b.c, b.layer, b.lookup, &w.moe); }


}  // namespace

bool BindRouterAndSharedExpert(const model::BoundTensor& t, model::MoeWeights& m) {
  switch (t.plan.role) {
    case model::Role::kRouter: m.router = t.view; return true;
    case kShGate: m.shared_gate = t.view; return true;
    case kShUp: m.shared_up = t.view; return true;
    case kShDown: m.shared_down = t.view; return true;
    default: return false;
  }
}

extern const model::KindConfig kConfig;  // its hyperparameters (moe_config.cpp)

extern const model::FfnKindInfo kModelSpec{"moe", {PlanMoe, Bind, Finish}, &kConfig};

}  // namespace lineage::kinds::moe
