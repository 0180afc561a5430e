// Latent attention's weights (src/kinds/; model/weights.h holds a layer's).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor_view.h"
#include "kinds/sparse_latent_attention/weights.h"

namespace lineage::model {

// Latent attention (spec §7.3) with nh heads; L = kv_lora_rank.
struct MlaWeights {
  TensorView q_proj;                  // [nh (dn + dr), H]: per head [q_nope | q_pe]; invalid with a q LoRA
  TensorView q_a;                     // [q_lora, H]  (q LoRA: q = q_b rmsnorm(q_a xn))
  std::vector<float> q_a_norm;        // [q_lora]
  TensorView q_b;                     // [nh (dn + dr), q_lora]
  IndexerWeights indexer;             // full layers of a sparse model
  TensorView out_gate;                // [nh dv, H]: K3's output gate, u *= sigmoid(out_gate xn)
  TensorView kv_a;                    // [L + dr, H]: [c_kv | k_pe]
  std::vector<float> kv_a_norm;       // [L]
  // Per head, whatever the file's cut (HF kv_b_proj or GGUF attn_k_b /
  // attn_v_b): k_b_t[h] = W_k,h^T [L, dn] (absorbs q_nope into the latent),
  // v_b[h] = W_v,h [dv, L]. Views of the file, or of `owned` where the file
  // stores W_k,h untransposed (HF).
  std::vector<TensorView> k_b_t;
  std::vector<TensorView> v_b;
  std::shared_ptr<const std::vector<float>> owned;
  TensorView o_proj;                  // [H, nh dv]
};

}  // namespace lineage::model
