// The delta-rule mixers' hyperparameters (spec §2, §7.2): the widths both
// Gated DeltaNet and Kimi Delta Attention are sized by
// (ModelConfig::delta). Each kind reads them from its own file keys
// (gated_deltanet_spec.cpp: Qwen's ssm.* / linear_*; kda_spec.cpp: Kimi's
// kda.* / linear_attn_config), writes, checks and fingerprints them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace lineage::model {

// How GDN value heads map to key heads when H_v > H_k (spec §2.4):
// grouped (HF): value head h uses key head h / r; tiled (Qwen3.5 GGUF): h % H_k.
enum class VHeadOrder { kGrouped, kTiled };

struct DeltaConfig {
  int64_t k_heads = 0;      // H_k
  int64_t v_heads = 0;      // H_v
  int64_t k_dim = 0;        // d_k
  int64_t v_dim = 0;        // d_v
  int64_t conv_kernel = 4;  // K
  VHeadOrder v_head_order = VHeadOrder::kGrouped;
  // Kimi K3's KDA decay: < 0: g = lb sigmoid(exp(A_log) (f + dt_bias)); 0: Kimi's softplus form.
  double gate_lower_bound = 0;

  // The conv channels: q | k | v.
  int64_t conv_dim() const { return 2 * k_heads * k_dim + v_heads * v_dim; }
};

struct ModelConfig;

// The checks and fingerprint values both delta kinds' hooks share: every
// width in range and the value heads a multiple of the key heads.
Status ValidateDeltaConfig(const ModelConfig& c);
std::vector<double> DeltaFingerprint(const ModelConfig& c);

}  // namespace lineage::model
