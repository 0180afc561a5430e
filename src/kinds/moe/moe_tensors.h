// What the MoE kinds share (src/kinds/moe/, src/kinds/deepseek_moe/): the
// router and the shared expert's three matrices bind alike in both.
#pragma once

#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/weights.h"

namespace lineage::kinds::moe {

// The shared expert's roles, which both MoE kinds plan (layer_kinds.h).
inline constexpr model::Role kShGate = model::FfnRole(model::FfnKind::kMoe, 1);
inline constexpr model::Role kShUp = model::FfnRole(model::FfnKind::kMoe, 2);
inline constexpr model::Role kShDown = model::FfnRole(model::FfnKind::kMoe, 3);

// Binds the router or a shared-expert matrix into m; false for another role.
bool BindRouterAndSharedExpert(const model::BoundTensor& t, model::MoeWeights& m);

}  // namespace lineage::kinds::moe
