// The Qwen MoE's hyperparameters (expert_config.h) as Qwen3.5-MoE and
// Qwen3-Next store them (spec §4.3, §5.2): GGUF expert_*, config.json
// num_experts, moe_intermediate_size, shared_expert_intermediate_size.
#include "kinds/moe/expert_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::moe {
namespace {

using namespace model;
using L = ConfigLimits;

// The Qwen archs with experts; the latent archs' are the DeepSeek kind's.
bool QwenMoe(Arch a) { return IsHybrid(a) && IsMoeArch(a); }

Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (!QwenMoe(c->arch)) return Status::Ok();
  ExpertConfig& e = c->experts;
  LINEAGE_ASSIGN_OR_RETURN(e.count, ReadIntKey(g, a + "expert_count", 1, L::kMaxExperts));
  LINEAGE_ASSIGN_OR_RETURN(e.per_token, ReadIntKey(g, a + "expert_used_count", 1, e.count));
  LINEAGE_ASSIGN_OR_RETURN(e.width, ReadIntKey(g, a + "expert_feed_forward_length", 1, L::kMaxIntermediate));
  LINEAGE_ASSIGN_OR_RETURN(e.shared_width,
                           ReadIntKey(g, a + "expert_shared_feed_forward_length", 1, L::kMaxIntermediate));
  return Status::Ok();
}

Status ReadHf(const JsonField& j, ModelConfig* c) {
  if (!QwenMoe(c->arch)) return Status::Ok();
  ExpertConfig& e = c->experts;
  LINEAGE_ASSIGN_OR_RETURN(e.count, j["num_experts"].Int(1, L::kMaxExperts));
  LINEAGE_ASSIGN_OR_RETURN(e.per_token, j["num_experts_per_tok"].Int(1, e.count));
  LINEAGE_ASSIGN_OR_RETURN(e.width, j["moe_intermediate_size"].Int(1, L::kMaxIntermediate));
  LINEAGE_ASSIGN_OR_RETURN(e.shared_width, j["shared_expert_intermediate_size"].Int(1, L::kMaxIntermediate));
  // Every layer is sparse in the released models; other mixes are not.
  LINEAGE_ASSIGN_OR_RETURN(int64_t sparse_step, j["decoder_sparse_step"].IntOr(1, 0, L::kMaxLayers));
  const JsonField mlp_only = j["mlp_only_layers"];
  if (sparse_step != 1 || (mlp_only.present() && (!mlp_only.is_array() || !mlp_only.raw()->empty())))
    return Unsupported(j.file() + ": dense layers inside a MoE model (decoder_sparse_step, mlp_only_layers)");
  LINEAGE_ASSIGN_OR_RETURN(bool norm_topk, j["norm_topk_prob"].BoolOr(true));
  if (!norm_topk) return Unsupported(j.file() + ": norm_topk_prob false (routing weights that do not sum to 1)");
  return Status::Ok();
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (!UsesFfn(c, FfnKind::kMoe)) return {};
  const ExpertConfig& e = c.experts;
  return {{a + "expert_count", static_cast<uint32_t>(e.count)},
          {a + "expert_used_count", static_cast<uint32_t>(e.per_token)},
          {a + "expert_feed_forward_length", static_cast<uint32_t>(e.width)},
          {a + "expert_shared_feed_forward_length", static_cast<uint32_t>(e.shared_width)}};
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (!UsesFfn(c, FfnKind::kMoe)) return;
  const ExpertConfig& e = c.experts;
  t["decoder_sparse_step"] = 1;
  t["mlp_only_layers"] = nlohmann::ordered_json::array();
  t["moe_intermediate_size"] = e.width;
  if (c.arch == Arch::kQwen3Next) t["norm_topk_prob"] = true;
  t["num_experts"] = e.count;
  t["num_experts_per_tok"] = e.per_token;
  t["shared_expert_intermediate_size"] = e.shared_width;
}

Status Validate(const ModelConfig& c) {
  return QwenMoe(c.arch) ? ValidateExpertConfig(c) : Status::Ok();
}

std::vector<double> Fingerprint(const ModelConfig& c) {
  return UsesFfn(c, FfnKind::kMoe) ? ExpertFingerprint(c) : std::vector<double>{};
}

}  // namespace

extern const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint};

}  // namespace lineage::kinds::moe
