// The MoE feed-forwards' hyperparameters (spec §4.3, §7.4;
// latent-attention §2): expert counts and widths and how the router picks
// (ModelConfig::experts), which both MoE kinds read. moe_spec.cpp reads the
// Qwen form from both file forms, deepseek_moe_spec.cpp the DeepSeek-V3
// form (Kimi's and DeepSeek's names); each writes, checks and fingerprints
// what it reads.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"

namespace lineage::model {

// Qwen (kMoe): a softmax router over all experts, the top `per_token`
// renormalised to sum to 1, plus a shared expert scaled by sigmoid(x .
// shared gate). DeepSeek-V3 (kDeepseekMoe): a sigmoid router, top-k on
// score + e_score_correction_bias, the chosen scores renormalised and times
// routed_scaling; a shared expert without gate; layers [0,
// leading_dense_layers) have a dense FFN of width ModelConfig::intermediate.
struct ExpertConfig {
  int64_t count = 0;         // E; zero: a dense model
  int64_t per_token = 0;     // k
  int64_t width = 0;         // one routed expert's SwiGLU width
  int64_t shared_width = 0;  // the shared expert's SwiGLU width
  int64_t leading_dense_layers = 0;
  double routed_scaling = 1.0;
  bool renormalise = true;  // expert_weights_norm / norm_topk_prob
  // Group-limited routing (DeepSeek-V3.2: 8 groups, 4 used): a group scores
  // the sum of its two best biased scores; experts outside the best
  // `groups_used` groups are not chosen. 1 / 1: no grouping.
  int64_t groups = 1;
  int64_t groups_used = 1;
  int64_t latent = 0;  // Kimi K3's latent MoE width (0: experts at hidden)
};

struct ModelConfig;

// The checks and fingerprint values both MoE kinds' hooks share: counts and
// widths in range, the leading dense layers within the model, a positive
// scaling, and groups that split the experts and hold the chosen ones.
Status ValidateExpertConfig(const ModelConfig& c);

// Layers [0, leading_dense_layers) get the dense feed-forward (the DeepSeek
// MoE's refine_layers, which RefineLayers runs once the count is read or
// stated).
void ApplyLeadingDenseLayers(ModelConfig* c);
std::vector<double> ExpertFingerprint(const ModelConfig& c);

}  // namespace lineage::model
