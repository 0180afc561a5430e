// Kimi Delta Attention's weights (src/kinds/; model/weights.h holds a layer's).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor_view.h"

namespace lineage::model {

// Kimi Delta Attention (spec §7.2); nh heads of d channels, inner = nh d.
struct KdaWeights {
  TensorView q_proj, k_proj, v_proj;  // [inner, H] each
  std::vector<float> conv;            // [3 inner, K]: q, k, v channels in that order
  TensorView f_a;                     // [d, H]
  TensorView f_b;                     // [inner, d]
  TensorView b_proj;                  // [nh, H]
  std::vector<float> ssm_a;           // [nh], = -exp(A_log)
  std::vector<float> dt_bias;         // [inner]
  TensorView g_a;                     // [d, H]
  TensorView g_b;                     // [inner, d]
  TensorView g_full;                  // [inner, H]: K3's full-rank output gate, in place of g_b g_a
  std::vector<float> norm;            // [d], plain weight
  TensorView o_proj;                  // [H, inner]
};

}  // namespace lineage::model
