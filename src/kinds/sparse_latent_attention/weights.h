// The lightning indexer's weights (src/kinds/; model/weights.h holds a layer's).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor_view.h"

namespace lineage::model {

// The lightning indexer of a full sparse layer (spec latent-attention §1.2):
// Hi heads of D; q_lora = ModelConfig::mla.q_lora_rank.
struct IndexerWeights {
  TensorView q_b;                     // [Hi D, q_lora]: per head [rope | nope], from the normed q latent
  TensorView k;                       // [D, H]
  std::vector<float> k_norm;          // [D] LayerNorm weight
  std::vector<float> k_norm_bias;     // [D] LayerNorm bias
  TensorView weights_proj;            // [Hi, H]: the per-head score weights
  bool valid() const { return k.valid(); }
};

}  // namespace lineage::model
