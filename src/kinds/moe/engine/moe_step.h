// The MoE feed-forward's step (moe_layer.cpp), which both MoE kinds run: the
// router's form (softmax, or DeepSeek-V3's sigmoid with bias and groups)
// comes from the config.
#pragma once

#include "engine/layers.h"

namespace lineage::kinds::moe {

void RunMoe(const model::LayerWeights& w, const engine::StepContext& ctx, const float* xn, float* out);

}  // namespace lineage::kinds::moe
