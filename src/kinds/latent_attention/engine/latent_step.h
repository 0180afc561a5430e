// What the sparse kind (src/kinds/sparse_latent_attention/) takes from
// latent attention's step: the weights every latent layer streams.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor_view.h"
#include "model/weights.h"

namespace lineage::kinds::latent_attention {

std::vector<const TensorView*> LatentMatrices(const model::LayerWeights& w);
std::vector<std::pair<std::string, const std::vector<float>*>> LatentVectors(const model::LayerWeights& w);

}  // namespace lineage::kinds::latent_attention
