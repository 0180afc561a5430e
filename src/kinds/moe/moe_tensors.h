// What the MoE kinds share (src/kinds/moe/, src/kinds/deepseek_moe/): the
// router and the shared expert's three matrices bind alike in both.
#pragma once

#include "model/kind_binding.h"
#include "model/weights.h"

namespace lineage::kinds::moe {

// Binds the router or a shared-expert matrix into m; false for another role.
bool BindRouterAndSharedExpert(const model::BoundTensor& t, model::MoeWeights& m);

}  // namespace lineage::kinds::moe
