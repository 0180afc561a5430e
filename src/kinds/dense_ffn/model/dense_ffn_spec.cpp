// The dense feed-forward's tensors (layer_kinds.h).
#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::dense_ffn {
namespace {

using namespace model;

// The dense SwiGLU feed-forward.
void PlanDense(TensorPlanner& p, int64_t l) {
  const int64_t H = p.c.hidden, I = p.c.intermediate;
  p.Add(Role::kFfnGate, l, "mlp.gate_proj.weight", "ffn_gate.weight", {I, H});
  p.Add(Role::kFfnUp, l, "mlp.up_proj.weight", "ffn_up.weight", {I, H});
  p.Add(Role::kFfnDown, l, "mlp.down_proj.weight", "ffn_down.weight", {H, I});
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  switch (t.plan.role) {
    case Role::kFfnGate: w.gate_proj = t.view; return true;
    case Role::kFfnUp: w.up_proj = t.view; return true;
    case Role::kFfnDown: w.down_proj = t.view; return true;
    default: return false;
  }
}


}  // namespace

extern const model::FfnKindInfo kModelSpec{"dense", {PlanDense, Bind, nullptr}};

}  // namespace lineage::kinds::dense_ffn
