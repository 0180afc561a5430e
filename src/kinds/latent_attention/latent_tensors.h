// The latent attention kind's tensors (latent_attention_spec.cpp), which
// the sparse kind (src/kinds/sparse_latent_attention/) extends with its
// indexer's.
#pragma once

#include <cstdint>

#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::latent_attention {

// Its roles (layer_kinds.h): the query (whole, or GLM / DeepSeek's LoRA and
// its norm), the latent down-projection with k_pe and its norm, HF kv_b_proj
// or GGUF's split attn_k_b (per head W_k^T) and attn_v_b, K3's output gate,
// the output.
inline constexpr model::Role kMlaQ = model::MixerRole(model::MixerKind::kLatent, 0);
inline constexpr model::Role kMlaQA = model::MixerRole(model::MixerKind::kLatent, 1);
inline constexpr model::Role kMlaQANorm = model::MixerRole(model::MixerKind::kLatent, 2);
inline constexpr model::Role kMlaQB = model::MixerRole(model::MixerKind::kLatent, 3);
inline constexpr model::Role kMlaKvA = model::MixerRole(model::MixerKind::kLatent, 4);
inline constexpr model::Role kMlaKvANorm = model::MixerRole(model::MixerKind::kLatent, 5);
inline constexpr model::Role kMlaKvB = model::MixerRole(model::MixerKind::kLatent, 6);
inline constexpr model::Role kMlaKB = model::MixerRole(model::MixerKind::kLatent, 7);
inline constexpr model::Role kMlaVB = model::MixerRole(model::MixerKind::kLatent, 8);
inline constexpr model::Role kMlaGate = model::MixerRole(model::MixerKind::kLatent, 9);
inline constexpr model::Role kMlaOut = model::MixerRole(model::MixerKind::kLatent, 10);

// Layer l's latent attention tensors, in checkpoint order.
void PlanLatentTensors(model::TensorPlanner& p, int64_t l);
// Binds one of them into w.mla; false for another role.
bool BindLatentTensor(const model::BoundTensor& t, model::LayerWeights& w);

}  // namespace lineage::kinds::latent_attention
