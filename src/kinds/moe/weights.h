// The MoE feed-forwards' weights (both MoE kinds) (src/kinds/; model/weights.h holds a layer's).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor_view.h"

namespace lineage::model {

// Sparse MoE FFN (spec §4.3), every routed expert a SwiGLU of width I_e.
// Per-expert views are slices of the file's tensors, whatever their layout.
struct MoeWeights {
  TensorView router;                   // [E, H]
  std::vector<TensorView> gate;        // E x [I_e, H]
  std::vector<TensorView> up;          // E x [I_e, H]
  std::vector<TensorView> down;        // E x [H, I_e]
  TensorView shared_gate;              // [I_s, H]
  TensorView shared_up;                // [I_s, H]
  TensorView shared_down;              // [H, I_s]
  std::vector<float> shared_gate_inp;  // [H]: the shared expert's scale is sigmoid(x . this); empty: no gate (kimi)
  std::vector<float> score_bias;       // [E]: kimi's e_score_correction_bias (selection only); else empty
  // K3's latent MoE: the routed experts read latent_down xn [X] and their
  // weighted sum goes through rmsnorm(.) latent_norm, then latent_up.
  TensorView latent_down;              // [X, H]
  std::vector<float> latent_norm;      // [X]; empty: no norm
  TensorView latent_up;                // [H, X]
};

}  // namespace lineage::model
