// The DeepSeek-V3 MoE's hyperparameters (moe/expert_config.h) as the latent
// archs store them (spec §7.1, §7.5; latent-attention §3.1, §3.3): GGUF
// expert_* and leading_dense_block_count; config.json under Kimi's names
// (kimi_linear, kda_dsa, kimi_k3) or DeepSeek's (glm_moe_dsa, deepseek_v32).
#include "kinds/moe/expert_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::deepseek_moe {
namespace {

using namespace model;
using L = ConfigLimits;

Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (!c->latent()) return Status::Ok();
  ExpertConfig& e = c->experts;
  LINEAGE_ASSIGN_OR_RETURN(e.count, ReadIntKey(g, a + "expert_count", 1, L::kMaxExperts));
  LINEAGE_ASSIGN_OR_RETURN(e.per_token, ReadIntKey(g, a + "expert_used_count", 1, e.count));
  LINEAGE_ASSIGN_OR_RETURN(e.leading_dense_layers, ReadIntKey(g, a + "leading_dense_block_count", 0, c->num_layers, 0));
  LINEAGE_ASSIGN_OR_RETURN(int64_t shared, ReadIntKey(g, a + "expert_shared_count", 1, 64, 1));
  LINEAGE_ASSIGN_OR_RETURN(e.width, ReadIntKey(g, a + "expert_feed_forward_length", 1, L::kMaxIntermediate));
  e.shared_width = shared * e.width;
  LINEAGE_ASSIGN_OR_RETURN(e.routed_scaling, ReadPositiveDecimal(g, a + "expert_weights_scale", 1.0, 1e6));
  const bool gating_required = c->arch == Arch::kDeepseek32;
  LINEAGE_ASSIGN_OR_RETURN(int64_t gating, gating_required ? ReadIntKey(g, a + "expert_gating_func", 0, 3)
                                                           : ReadIntKey(g, a + "expert_gating_func", 0, 3, 2));
  if (gating != 2)
    return Unsupported(g.path() + ": metadata '" + a + "expert_gating_func' is " + std::to_string(gating) +
                       " (only 2, sigmoid, is a DeepSeek-V3 router)");
  if (g.Find(a + "expert_weights_norm")) {
    LINEAGE_ASSIGN_OR_RETURN(e.renormalise, g.GetBool(a + "expert_weights_norm"));
  }
  LINEAGE_ASSIGN_OR_RETURN(e.groups, ReadIntKey(g, a + "expert_group_count", 1, L::kMaxExperts, 1));
  LINEAGE_ASSIGN_OR_RETURN(e.groups_used, ReadIntKey(g, a + "expert_group_used_count", 1, e.groups, e.groups));
  if (c->arch == Arch::kKimiK3) {
    LINEAGE_ASSIGN_OR_RETURN(e.latent, ReadIntKey(g, a + "expert_latent_length", 0, L::kMaxHidden, 0));
  }
  return Status::Ok();
}

Status ReadHf(const JsonField& j, ModelConfig* c) {
  if (!c->latent()) return Status::Ok();
  ExpertConfig& e = c->experts;
  const bool kimi = KimiNamed(c->arch);
  LINEAGE_ASSIGN_OR_RETURN(e.count, j[kimi ? "num_experts" : "n_routed_experts"].Int(1, L::kMaxExperts));
  LINEAGE_ASSIGN_OR_RETURN(e.per_token, j[kimi ? "num_experts_per_token" : "num_experts_per_tok"].Int(1, e.count));
  LINEAGE_ASSIGN_OR_RETURN(e.width, j["moe_intermediate_size"].Int(1, L::kMaxIntermediate));
  LINEAGE_ASSIGN_OR_RETURN(int64_t shared, j[kimi ? "num_shared_experts" : "n_shared_experts"].IntOr(1, 1, 64));
  e.shared_width = shared * e.width;
  LINEAGE_ASSIGN_OR_RETURN(e.leading_dense_layers, j["first_k_dense_replace"].IntOr(0, 0, c->num_layers));
  LINEAGE_ASSIGN_OR_RETURN(e.routed_scaling, j["routed_scaling_factor"].PositiveFloatOr(1.0, 1e6));
  const char* act_key = kimi ? "moe_router_activation_func" : "scoring_func";
  LINEAGE_ASSIGN_OR_RETURN(std::string act, j[act_key].StringOr("sigmoid"));
  if (act != "sigmoid") return Unsupported(j.file() + ": " + act_key + " '" + act + "' (only sigmoid)");
  LINEAGE_ASSIGN_OR_RETURN(e.renormalise, j[kimi ? "moe_renormalize" : "norm_topk_prob"].BoolOr(true));
  if (!e.renormalise && c->arch == Arch::kKimiLinear)
    return Unsupported(j.file() + ": moe_renormalize false (routing weights that are not renormalised)");
  LINEAGE_ASSIGN_OR_RETURN(e.groups, j[kimi ? "num_expert_group" : "n_group"].IntOr(1, 1, L::kMaxExperts));
  LINEAGE_ASSIGN_OR_RETURN(e.groups_used, j["topk_group"].IntOr(e.groups, 1, e.groups));
  if (e.groups == 1) e.groups_used = 1;
  if (e.groups != 1 && c->arch == Arch::kKimiLinear)
    return Unsupported(j.file() + ": num_expert_group " + std::to_string(e.groups) + " (grouped top-k)");
  if (c->arch != Arch::kKimiK3) return Status::Ok();
  const JsonField latent = j["routed_expert_hidden_size"];
  if (latent.present()) {
    LINEAGE_ASSIGN_OR_RETURN(e.latent, latent.Int(1, L::kMaxHidden));
  }
  return Status::Ok();
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (!c.latent()) return {};
  const ExpertConfig& e = c.experts;
  std::vector<GgufKey> keys = {
      {a + "expert_count", static_cast<uint32_t>(e.count)},
      {a + "expert_used_count", static_cast<uint32_t>(e.per_token)},
      {a + "expert_feed_forward_length", static_cast<uint32_t>(e.width)},
      {a + "expert_shared_count", static_cast<uint32_t>(e.shared_width / e.width)},
      {a + "leading_dense_block_count", static_cast<uint32_t>(e.leading_dense_layers)},
      {a + "expert_weights_scale", static_cast<float>(e.routed_scaling)},
      {a + "expert_weights_norm", e.renormalise},
      {a + "expert_gating_func", uint32_t{2}},  // sigmoid
  };
  if (e.groups > 1) {
    keys.push_back({a + "expert_group_count", static_cast<uint32_t>(e.groups)});
    keys.push_back({a + "expert_group_used_count", static_cast<uint32_t>(e.groups_used)});
  }
  if (e.latent > 0) keys.push_back({a + "expert_latent_length", static_cast<uint32_t>(e.latent)});
  return keys;
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (!c.latent()) return;
  const ExpertConfig& e = c.experts;
  const bool kimi = KimiNamed(c.arch);
  t["first_k_dense_replace"] = e.leading_dense_layers;
  t["moe_intermediate_size"] = e.width;
  t["moe_layer_freq"] = 1;
  t[kimi ? "moe_renormalize" : "norm_topk_prob"] = e.renormalise;
  t[kimi ? "moe_router_activation_func" : "scoring_func"] = "sigmoid";
  t[kimi ? "num_expert_group" : "n_group"] = e.groups;
  t[kimi ? "num_experts" : "n_routed_experts"] = e.count;
  t[kimi ? "num_experts_per_token" : "num_experts_per_tok"] = e.per_token;
  t[kimi ? "num_shared_experts" : "n_shared_experts"] = e.shared_width / e.width;
  t["routed_scaling_factor"] = e.routed_scaling;
  if (e.latent > 0) t["routed_expert_hidden_size"] = e.latent;
  t["topk_group"] = e.groups_used;
  if (kimi) {
    t["use_grouped_topk"] = true;
  } else {
    t["topk_method"] = "noaux_tc";
  }
}

Status Validate(const ModelConfig& c) { return c.latent() ? ValidateExpertConfig(c) : Status::Ok(); }

std::vector<double> Fingerprint(const ModelConfig& c) {
  return c.latent() ? ExpertFingerprint(c) : std::vector<double>{};
}

}  // namespace

extern const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint, ApplyLeadingDenseLayers};

}  // namespace lineage::kinds::deepseek_moe
