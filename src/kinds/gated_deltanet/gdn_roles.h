// Gated DeltaNet's roles (layer_kinds.h): its tensors as Qwen3.5 plans
// them (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a), Qwen3-Next's fused
// in_proj_qkvz and in_proj_ba, and the conv, dt bias, A_log, norm and
// output both have. The GGUF writer (tools/gguf_model_writer.cpp) reorders
// some of them, so they are named in a header.
#pragma once

#include "model/layer_kinds.h"

namespace lineage::kinds::gated_deltanet {

inline constexpr model::Role kLinQkv = model::MixerRole(model::MixerKind::kGatedDeltaNet, 0);
inline constexpr model::Role kLinZ = model::MixerRole(model::MixerKind::kGatedDeltaNet, 1);
inline constexpr model::Role kLinB = model::MixerRole(model::MixerKind::kGatedDeltaNet, 2);
inline constexpr model::Role kLinA = model::MixerRole(model::MixerKind::kGatedDeltaNet, 3);
inline constexpr model::Role kLinConv = model::MixerRole(model::MixerKind::kGatedDeltaNet, 4);
inline constexpr model::Role kLinDtBias = model::MixerRole(model::MixerKind::kGatedDeltaNet, 5);
inline constexpr model::Role kLinALog = model::MixerRole(model::MixerKind::kGatedDeltaNet, 6);
inline constexpr model::Role kLinNorm = model::MixerRole(model::MixerKind::kGatedDeltaNet, 7);
inline constexpr model::Role kLinOut = model::MixerRole(model::MixerKind::kGatedDeltaNet, 8);
inline constexpr model::Role kLinQkvz = model::MixerRole(model::MixerKind::kGatedDeltaNet, 9);
inline constexpr model::Role kLinBa = model::MixerRole(model::MixerKind::kGatedDeltaNet, 10);

}  // namespace lineage::kinds::gated_deltanet
