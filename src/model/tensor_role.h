// Role: what a planned tensor (tensor_plan.h) is to its binder. The
// model-wide roles are named here, with the router and routed experts that
// the MoE kinds share (PlanExperts); every other role belongs to one layer
// kind and is named in its folder (MixerRole / FfnRole, layer_kinds.h), so a
// new kind adds none here. A role is its number: roles compare, and a
// kind's binder switches over its own, as integers.
#pragma once

#include <cstdint>

namespace lineage::model {

struct Role {
  uint16_t id = 0;
  constexpr operator uint16_t() const { return id; }

  static const Role kEmbed, kLmHead, kFinalNorm, kInputNorm, kPostNorm;
  // Block AttnRes' score vectors (Kimi K3, spec latent-attention §2).
  static const Role kAttnResScore, kFfnResScore, kOutputResScore;
  // The MTP (NextN) block's own tensors (its layer tensors are its kinds'
  // at layer L): eh_proj over [enorm(embed) | hnorm(h)], the two norms, and
  // the norm before the shared head.
  static const Role kMtpEhProj, kMtpENorm, kMtpHNorm, kMtpHeadNorm;
  // Sparse MoE (spec §4.3): the router, and the routed experts in one of
  // three layouts: 3-D [E, rows, cols] per matrix (kExpGate / kExpUp /
  // kExpDown), 3-D with gate and up merged [E, 2 I, H] (kExpGateUp), or one
  // 2-D tensor per expert (kExpGate / kExpUp / kExpDown with `expert` >= 0).
  static const Role kRouter, kExpGate, kExpUp, kExpDown, kExpGateUp;
};

inline constexpr Role Role::kEmbed{0};
inline constexpr Role Role::kLmHead{1};
inline constexpr Role Role::kFinalNorm{2};
inline constexpr Role Role::kInputNorm{3};
inline constexpr Role Role::kPostNorm{4};
inline constexpr Role Role::kAttnResScore{5};
inline constexpr Role Role::kFfnResScore{6};
inline constexpr Role Role::kOutputResScore{7};
inline constexpr Role Role::kMtpEhProj{8};
inline constexpr Role Role::kMtpENorm{9};
inline constexpr Role Role::kMtpHNorm{10};
inline constexpr Role Role::kMtpHeadNorm{11};
inline constexpr Role Role::kRouter{12};
inline constexpr Role Role::kExpGate{13};
inline constexpr Role Role::kExpUp{14};
inline constexpr Role Role::kExpDown{15};
inline constexpr Role Role::kExpGateUp{16};

// Role i (< 64) of the kind in table slot `slot`, numbered apart from the
// model-wide roles and from every other kind's.
constexpr Role KindRole(int slot, int i) { return Role{static_cast<uint16_t>(256 + 64 * slot + i)}; }

}  // namespace lineage::model
