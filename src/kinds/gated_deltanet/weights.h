// Gated DeltaNet's weights (src/kinds/; model/weights.h holds a layer's).
#pragma once

#include <memory>
#include <vector>

#include "core/tensor_view.h"

namespace lineage::model {

// Which GDN input projection output a block of fused weight rows feeds.
enum class GdnInput { kQkv, kZ, kB, kA };

// A run of consecutive rows of a fused projection whose outputs are columns
// [col, col + w.rows()) of one GDN input.
struct GdnInputBlock {
  TensorView w;                   // [rows, H], a row slice of the fused tensor
  GdnInput input = GdnInput::kQkv;
  int64_t col = 0;
};

struct LinearAttentionWeights {   // Gated DeltaNet, spec §2
  // Separate projections (qwen3_5, qwen3_5_moe; the GGUF attn_qkv and
  // attn_gate of qwen3_next). Invalid views where the file fuses them.
  TensorView in_proj_qkv;         // [conv_dim, H]: rows [q (H_k d_k) | k (H_k d_k) | v (H_v d_v)]
  TensorView in_proj_z;           // [H_v d_v, H]
  TensorView in_proj_b;           // [H_v, H]
  TensorView in_proj_a;           // [H_v, H]
  // Qwen3-Next's fused projections, grouped per key head g (spec §2.1):
  TensorView in_proj_qkvz;        // HF: [2 key_dim + 2 value_dim, H], per g [q_g | k_g | v_g (r d_v) | z_g (r d_v)]
  TensorView in_proj_ba;          // [2 H_v, H], per g [b_g (r) | a_g (r)]
  // When not empty: every input projection as row blocks (the separate
  // views whole, the fused ones cut per group), so the forward pass runs
  // one list of Gemms whatever the file fused.
  std::vector<GdnInputBlock> in_blocks;
  std::vector<float> conv;        // [conv_dim, K]
  std::vector<float> dt_bias;     // [H_v]
  std::vector<float> ssm_a;       // [H_v], = -exp(A_log)
  std::vector<float> norm;        // [d_v], plain weight (never 1 + w)
  TensorView out_proj;            // [H, H_v d_v]
};

}  // namespace lineage::model
