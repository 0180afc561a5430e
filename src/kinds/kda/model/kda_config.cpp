// Kimi Delta Attention's hyperparameters (gated_deltanet/delta_config.h) as
// Kimi's files store them (spec §7.1, §7.5; K3 latent-attention §3.3): GGUF
// kda.* with the conv kernel under ssm.*, config.json linear_attn_config.
// KDA has as many key as value heads, of one size.
#include "kinds/gated_deltanet/delta_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::kda {
namespace {

using namespace model;
using L = ConfigLimits;

// The latent archs' GGUF layer kinds are read first (0 in head_count_kv:
// KDA); a model without KDA layers has none of these keys.
Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (!c->latent() || c->num_linear_layers() == 0) return Status::Ok();
  DeltaConfig& d = c->delta;
  LINEAGE_ASSIGN_OR_RETURN(d.conv_kernel, ReadIntKey(g, a + "ssm.conv_kernel", 1, L::kMaxConvKernel));
  LINEAGE_ASSIGN_OR_RETURN(d.k_dim, ReadIntKey(g, a + "kda.head_dim", 1, L::kMaxHeadDim));
  d.v_dim = d.k_dim;
  // Kimi's KDA has as many heads as its MLA (llama.cpp reads head_count for
  // both); the hybrid kda-dsa states its own.
  LINEAGE_ASSIGN_OR_RETURN(d.k_heads, ReadIntKey(g, a + "kda.head_count", 1, L::kMaxHeads, c->num_heads));
  d.v_heads = d.k_heads;
  if (c->arch == Arch::kKimiK3 && g.Find(a + "kda.gate_lower_bound")) {
    LINEAGE_ASSIGN_OR_RETURN(d.gate_lower_bound, g.GetFloat(a + "kda.gate_lower_bound"));
  }
  return Status::Ok();
}

// linear_attn_config, whose layer lists the architecture has read.
Status ReadHf(const JsonField& j, ModelConfig* c) {
  const JsonField lin = j["linear_attn_config"];
  if (!c->latent() || !lin.is_object()) return Status::Ok();
  DeltaConfig& d = c->delta;
  const bool k3 = c->arch == Arch::kKimiK3;
  // K3's KDA has as many heads as its MLA (llama.cpp reads head_count for both).
  LINEAGE_ASSIGN_OR_RETURN(d.k_heads, k3 ? lin["num_heads"].IntOr(c->num_heads, 1, L::kMaxHeads)
                                         : lin["num_heads"].Int(1, L::kMaxHeads));
  if (k3 && d.k_heads != c->num_heads)
    return Unsupported(j.file() + ": linear_attn_config.num_heads " + std::to_string(d.k_heads) +
                       " differs from num_attention_heads " + std::to_string(c->num_heads) +
                       " (Kimi K3's KDA and MLA share a head count)");
  LINEAGE_ASSIGN_OR_RETURN(d.k_dim, lin["head_dim"].Int(1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(d.conv_kernel, lin["short_conv_kernel_size"].IntOr(4, 1, L::kMaxConvKernel));
  d.v_heads = d.k_heads;
  d.v_dim = d.k_dim;
  const JsonField bound = lin["gate_lower_bound"];
  if (k3 && bound.present()) {
    if (!bound.raw()->is_number() || bound.raw()->get<double>() >= 0) return bound.Error("a negative number");
    d.gate_lower_bound = bound.raw()->get<double>();
  }
  return Status::Ok();
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (!UsesMixer(c, MixerKind::kKimiDelta)) return {};
  const DeltaConfig& d = c.delta;
  std::vector<GgufKey> keys = {{a + "ssm.conv_kernel", static_cast<uint32_t>(d.conv_kernel)},
                               {a + "kda.head_dim", static_cast<uint32_t>(d.k_dim)}};
  if (d.k_heads != c.num_heads) keys.push_back({a + "kda.head_count", static_cast<uint32_t>(d.k_heads)});
  if (d.gate_lower_bound < 0) keys.push_back({a + "kda.gate_lower_bound", static_cast<float>(d.gate_lower_bound)});
  return keys;
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (!UsesMixer(c, MixerKind::kKimiDelta)) return;
  const DeltaConfig& d = c.delta;
  nlohmann::ordered_json& lin = t["linear_attn_config"];
  if (d.gate_lower_bound < 0) lin["gate_lower_bound"] = d.gate_lower_bound;
  lin["head_dim"] = d.k_dim;
  lin["num_heads"] = d.k_heads;
  lin["short_conv_kernel_size"] = d.conv_kernel;
}

Status Validate(const ModelConfig& c) {
  if (!UsesMixer(c, MixerKind::kKimiDelta)) return Status::Ok();
  LINEAGE_RETURN_IF_ERROR(ValidateDeltaConfig(c));
  const DeltaConfig& d = c.delta;
  if (d.k_heads != d.v_heads || d.k_dim != d.v_dim)
    return InvalidArgument(c.source_path + ": KDA needs as many key as value heads of one size");
  if (!(d.gate_lower_bound <= 0 && d.gate_lower_bound > -1e6))
    return InvalidArgument(c.source_path + ": KDA gate lower bound " + std::to_string(d.gate_lower_bound) +
                           " is not negative");
  return Status::Ok();
}

std::vector<double> Fingerprint(const ModelConfig& c) {
  return UsesMixer(c, MixerKind::kKimiDelta) ? DeltaFingerprint(c) : std::vector<double>{};
}

}  // namespace

extern const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint};

}  // namespace lineage::kinds::kda
