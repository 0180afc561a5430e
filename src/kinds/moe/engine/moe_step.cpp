// The Qwen MoE in a step (layer_table.h): its forward is moe_layer.cpp.
#include "kinds/moe/engine/moe_step.h"

#include "engine/layer_table.h"

namespace lineage::kinds::moe {

void RunMoe(const model::LayerWeights& w, const engine::StepContext& ctx, const float* xn, float* out) {
  engine::MoeFeedForward(w.moe, ctx, xn, out);
}

extern const engine::FfnStep kEngineStep{RunMoe};

}  // namespace lineage::kinds::moe
