// The dense feed-forward's tensors (layer_kinds.h).
#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::dense_ffn {
namespace {

using namespace model;

// This kind's roles (layer_kinds.h).
constexpr Role kFfnGate = FfnRole(FfnKind::kDense, 0);
constexpr Role kFfnUp = FfnRole(FfnKind::kDense, 1);
constexpr Role kFfnDown = FfnRole(FfnKind::kDense, 2);

// The dense SwiGLU feed-forward.
void PlanDense(TensorPlanner& p, int64_t l) {
  const int64_t H = p.c.hidden, I = p.c.intermediate;
  p.Add(kFfnGate, l, "mlp.gate_proj.weight", "ffn_gate.weight", {I, H});
  p.Add(kFfnUp, l, "mlp.up_proj.weight", "ffn_up.weight", {I, H});
  p.Add(kFfnDown, l, "mlp.down_proj.weight", "ffn_down.weight", {H, I});
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  switch (t.plan.role) {
    case kFfnGate: w.gate_proj = t.view; return true;
    case kFfnUp: w.up_proj = t.view; return true;
    case kFfnDown: w.down_proj = t.view; return true;
    default: return false;
  }
}


}  // namespace

extern const model::KindConfig kConfig;  // its hyperparameters (situ_config.cpp)
extern const model::FfnKindInfo kModelSpec{"dense", {PlanDense, Bind, nullptr}, &kConfig};

}  // namespace lineage::kinds::dense_ffn
