// Latent attention's hyperparameters (spec §7.3; latent-attention §1.1,
// §1.5): the MLA widths, the query LoRA, the rotary dims and their YaRN
// scaling (ModelConfig::mla), which the dense and the sparse latent kinds
// share. latent_attention_spec.cpp reads them from both file forms, writes,
// checks and fingerprints them.
#pragma once

#include <cmath>
#include <cstdint>

namespace lineage::model {

// An MLA layer has num_heads query heads of head_dim = qk_nope_dim +
// qk_rope_dim and one latent row [c_kv (kv_lora_rank) | k_pe (qk_rope_dim)]
// per token; Kimi's rope_dims = qk_rope_dim although nothing is rotated.
struct LatentConfig {
  int64_t kv_lora_rank = 0;  // 512
  int64_t qk_nope_dim = 0;   // 128
  int64_t qk_rope_dim = 0;   // 64
  int64_t v_head_dim = 0;    // 128
  // q = q_b rmsnorm(q_a xn) when q_lora_rank > 0 (else q_proj xn, Kimi Linear).
  int64_t q_lora_rank = 0;
  // q_pe, k_pe rotated with interleaved pairs (2i, 2i+1); false: NoPE (Kimi).
  bool rope = false;
  // YaRN scaling of the rotary dims (DeepSeek-V3.2: factor 40 over 4096
  // positions); factor 0: none.
  double yarn_factor = 0;             // s
  int64_t yarn_original_context = 0;  // the positions trained before scaling
  double yarn_mscale_all_dim = 0;     // the attention scale's mscale = 1 + 0.1 * this * ln s

  // Values of one layer's latent cache row: [c_kv | k_pe] (576 for Kimi).
  int64_t latent_dim() const { return kv_lora_rank + qk_rope_dim; }
  // The score scale: mscale^2 / sqrt(dn + dr).
  double scale() const {
    const double mscale = yarn_factor > 1 ? 1.0 + 0.1 * yarn_mscale_all_dim * std::log(yarn_factor) : 1.0;
    return mscale * mscale / std::sqrt(static_cast<double>(qk_nope_dim + qk_rope_dim));
  }
};

}  // namespace lineage::model
