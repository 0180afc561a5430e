// Gated DeltaNet's hyperparameters (delta_config.h) as the Qwen hybrids
// store them: GGUF ssm.* (spec §5.2) and config.json linear_* (§1.1).
#include "kinds/gated_deltanet/delta_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::gated_deltanet {
namespace {

using namespace model;
using L = ConfigLimits;

// The converter stores the value heads tiled for Qwen3.5 (spec §2.4), and
// the value width as the whole inner size.
Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (!IsHybrid(c->arch)) return Status::Ok();
  DeltaConfig& d = c->delta;
  d.v_head_order = GgufTilesVHeads(c->arch) ? VHeadOrder::kTiled : VHeadOrder::kGrouped;
  LINEAGE_ASSIGN_OR_RETURN(d.conv_kernel, ReadIntKey(g, a + "ssm.conv_kernel", 1, L::kMaxConvKernel));
  LINEAGE_ASSIGN_OR_RETURN(d.k_dim, ReadIntKey(g, a + "ssm.state_size", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(d.k_heads, ReadIntKey(g, a + "ssm.group_count", 1, L::kMaxHeads));
  LINEAGE_ASSIGN_OR_RETURN(d.v_heads, ReadIntKey(g, a + "ssm.time_step_rank", 1, L::kMaxHeads));
  LINEAGE_ASSIGN_OR_RETURN(int64_t inner, ReadIntKey(g, a + "ssm.inner_size", 1, L::kMaxHeads * L::kMaxHeadDim));
  if (inner % d.v_heads != 0 || d.v_heads % d.k_heads != 0)
    return InvalidArgument(g.path() + ": inconsistent ssm.* keys (group_count, time_step_rank, inner_size)");
  d.v_dim = inner / d.v_heads;
  return Status::Ok();
}

Status ReadHf(const JsonField& j, ModelConfig* c) {
  if (!IsHybrid(c->arch)) return Status::Ok();
  DeltaConfig& d = c->delta;
  LINEAGE_ASSIGN_OR_RETURN(d.k_heads, j["linear_num_key_heads"].Int(1, L::kMaxHeads));
  LINEAGE_ASSIGN_OR_RETURN(d.v_heads, j["linear_num_value_heads"].Int(1, L::kMaxHeads));
  if (d.v_heads % d.k_heads != 0)
    return j["linear_num_value_heads"].Error("a multiple of linear_num_key_heads (" + std::to_string(d.k_heads) + ")");
  LINEAGE_ASSIGN_OR_RETURN(d.k_dim, j["linear_key_head_dim"].Int(1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(d.v_dim, j["linear_value_head_dim"].Int(1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(d.conv_kernel, j["linear_conv_kernel_dim"].IntOr(4, 1, L::kMaxConvKernel));
  return Status::Ok();
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (!UsesMixer(c, MixerKind::kGatedDeltaNet)) return {};
  const DeltaConfig& d = c.delta;
  return {{a + "ssm.conv_kernel", static_cast<uint32_t>(d.conv_kernel)},
          {a + "ssm.state_size", static_cast<uint32_t>(d.k_dim)},
          {a + "ssm.group_count", static_cast<uint32_t>(d.k_heads)},
          {a + "ssm.time_step_rank", static_cast<uint32_t>(d.v_heads)},
          {a + "ssm.inner_size", static_cast<uint32_t>(d.v_heads * d.v_dim)}};
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (!UsesMixer(c, MixerKind::kGatedDeltaNet)) return;
  const DeltaConfig& d = c.delta;
  t["linear_conv_kernel_dim"] = d.conv_kernel;
  t["linear_key_head_dim"] = d.k_dim;
  t["linear_num_key_heads"] = d.k_heads;
  t["linear_num_value_heads"] = d.v_heads;
  t["linear_value_head_dim"] = d.v_dim;
  t["mamba_ssm_dtype"] = "float32";
}

Status Validate(const ModelConfig& c) {
  return UsesMixer(c, MixerKind::kGatedDeltaNet) ? ValidateDeltaConfig(c) : Status::Ok();
}

std::vector<double> Fingerprint(const ModelConfig& c) {
  return UsesMixer(c, MixerKind::kGatedDeltaNet) ? DeltaFingerprint(c) : std::vector<double>{};
}

}  // namespace

extern const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint};

}  // namespace lineage::kinds::gated_deltanet
