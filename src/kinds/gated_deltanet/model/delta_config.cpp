// What both delta-rule kinds check and fingerprint of their widths
// (delta_config.h).
#include "kinds/gated_deltanet/delta_config.h"

#include "model/config.h"

namespace lineage::model {

Status ValidateDeltaConfig(const ModelConfig& c) {
  using L = ConfigLimits;
  const DeltaConfig& d = c.delta;
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "linear key heads", d.k_heads, 1, L::kMaxHeads));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "linear value heads", d.v_heads, 1, L::kMaxHeads));
  if (d.v_heads % d.k_heads != 0)
    return InvalidArgument(c.source_path + ": " + std::to_string(d.v_heads) +
                           " linear value heads are not a multiple of " + std::to_string(d.k_heads) + " key heads");
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "linear key head dim", d.k_dim, 1, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "linear value head dim", d.v_dim, 1, L::kMaxHeadDim));
  return CheckRange(c, "conv kernel", d.conv_kernel, 1, L::kMaxConvKernel);
}

std::vector<double> DeltaFingerprint(const ModelConfig& c) {
  const DeltaConfig& d = c.delta;
  return {static_cast<double>(d.k_heads), static_cast<double>(d.v_heads), static_cast<double>(d.k_dim),
          static_cast<double>(d.v_dim),   static_cast<double>(d.conv_kernel),
          static_cast<double>(d.v_head_order), d.gate_lower_bound};
}

}  // namespace lineage::model
