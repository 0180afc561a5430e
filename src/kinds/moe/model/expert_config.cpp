// What both MoE kinds check and fingerprint of their hyperparameters
// (expert_config.h).
#include "kinds/moe/expert_config.h"

#include <algorithm>

#include "model/config.h"

namespace lineage::model {

Status ValidateExpertConfig(const ModelConfig& c) {
  using L = ConfigLimits;
  const ExpertConfig& e = c.experts;
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "num_experts", e.count, 1, L::kMaxExperts));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "experts_per_token", e.per_token, 1, e.count));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "expert_intermediate", e.width, 1, L::kMaxIntermediate));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "shared_intermediate", e.shared_width, 1, L::kMaxIntermediate));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "leading_dense_layers", e.leading_dense_layers, 0, c.num_layers));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "expert_latent", e.latent, 0, L::kMaxHidden));
  if (!(e.routed_scaling > 0 && e.routed_scaling < 1e6))
    return InvalidArgument(c.source_path + ": expert_weights_scale " + std::to_string(e.routed_scaling) +
                           " is not a positive number");
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "expert_groups", e.groups, 1, std::max<int64_t>(1, e.count)));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "expert_groups_used", e.groups_used, 1, e.groups));
  if (e.count % e.groups != 0)
    return InvalidArgument(c.source_path + ": " + std::to_string(e.count) + " experts do not split into " +
                           std::to_string(e.groups) + " groups");
  if (e.groups > 1 && e.per_token > e.groups_used * (e.count / e.groups))
    return InvalidArgument(c.source_path + ": " + std::to_string(e.per_token) +
                           " experts per token do not fit in the " + std::to_string(e.groups_used) + " groups used");
  return Status::Ok();
}

void ApplyLeadingDenseLayers(ModelConfig* c) {
  for (int64_t l = 0; l < c->experts.leading_dense_layers && l < c->num_layers; ++l)
    c->layers[l].ffn = FfnKind::kDense;
}

std::vector<double> ExpertFingerprint(const ModelConfig& c) {
  const ExpertConfig& e = c.experts;
  return {static_cast<double>(e.count),        static_cast<double>(e.per_token),
          static_cast<double>(e.width),        static_cast<double>(e.shared_width),
          static_cast<double>(e.leading_dense_layers), e.routed_scaling,
          static_cast<double>(e.renormalise),  static_cast<double>(e.groups),
          static_cast<double>(e.groups_used),  static_cast<double>(e.latent)};
}

}  // namespace lineage::model
