// Softmax attention's weights (src/kinds/; model/weights.h holds a layer's).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor_view.h"

namespace lineage::model {

struct FullAttentionWeights {     // spec §3 (qwen3_5) and §11 (qwen3)
  TensorView q_proj;              // qwen3_5: [2 n_h hd, H] as [q_0|gate_0|q_1|gate_1|...]; qwen3: [n_h hd, H]
  TensorView k_proj;              // [n_kv hd, H]
  TensorView v_proj;              // [n_kv hd, H]
  TensorView o_proj;              // [H, n_h hd]
  std::vector<float> q_norm;      // [hd], effective scale
  std::vector<float> k_norm;      // [hd], effective scale
};

}  // namespace lineage::model
