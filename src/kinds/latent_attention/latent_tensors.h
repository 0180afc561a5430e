// The latent attention kind's tensors (latent_attention_spec.cpp), which
// the sparse kind (src/kinds/sparse_latent_attention/) extends with its
// indexer's.
#pragma once

#include <cstdint>

#include "model/kind_binding.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::latent_attention {

// Layer l's latent attention tensors, in checkpoint order.
void PlanLatentTensors(model::TensorPlanner& p, int64_t l);
// Binds one of them into w.mla; false for another role.
bool BindLatentTensor(const model::BoundTensor& t, model::LayerWeights& w);

}  // namespace lineage::kinds::latent_attention
