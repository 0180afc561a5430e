// Latent attention's hyperparameters (latent_config.h) as the latent archs'
// files store them (spec §7.1, §7.5; latent-attention §1.5, §3.1, §3.3).
// Kimi Linear and K3 are NoPE (K3 with a query LoRA); GLM-5, DeepSeek-V3.2
// and kda-dsa rotate k_pe and q_pe and take a query LoRA, DeepSeek-V3.2
// with YaRN. The kind also states the widths the attention fields hold for
// it: head_dim = nope + rope, rope_dims = rope, one latent "KV head".
#include "kinds/latent_attention/latent_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::latent_attention {
namespace {

using namespace model;
using L = ConfigLimits;

void StateAttentionWidths(ModelConfig* c) {
  c->head_dim = c->mla.qk_nope_dim + c->mla.qk_rope_dim;
  c->rope_dims = c->mla.qk_rope_dim;
  c->num_kv_heads = 1;  // the latent is one shared "head"
}

Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (!c->latent()) return Status::Ok();
  LatentConfig& m = c->mla;
  LINEAGE_ASSIGN_OR_RETURN(m.kv_lora_rank, ReadIntKey(g, a + "attention.kv_lora_rank", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(int64_t key_mla, ReadIntKey(g, a + "attention.key_length_mla", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(m.v_head_dim, ReadIntKey(g, a + "attention.value_length_mla", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(m.qk_rope_dim, ReadIntKey(g, a + "rope.dimension_count", 1, key_mla - 1));
  m.qk_nope_dim = key_mla - m.qk_rope_dim;
  StateAttentionWidths(c);
  // The converter states the latent row as the MQA key length: it must agree.
  LINEAGE_ASSIGN_OR_RETURN(int64_t key_length,
                           ReadIntKey(g, a + "attention.key_length", 1, 2 * L::kMaxHeadDim, m.latent_dim()));
  if (key_length != m.latent_dim())
    return InvalidArgument(g.path() + ": metadata '" + a + "attention.key_length' is " + std::to_string(key_length) +
                           " but the latent row is kv_lora_rank + rope.dimension_count = " +
                           std::to_string(m.latent_dim()));
  if (c->arch != Arch::kKimiLinear) {
    LINEAGE_ASSIGN_OR_RETURN(m.q_lora_rank, ReadIntKey(g, a + "attention.q_lora_rank", 0, L::kMaxHidden, 0));
  }
  if (NopeLatent(c->arch)) return Status::Ok();
  m.rope = true;
  const GgufValue* scaling = g.Find(a + "rope.scaling.type");
  if (scaling != nullptr && scaling->type == GgufType::kString && scaling->as_string == "yarn") {
    LINEAGE_ASSIGN_OR_RETURN(m.yarn_factor, ReadPositiveDecimal(g, a + "rope.scaling.factor", 1.0, 1e6));
    LINEAGE_ASSIGN_OR_RETURN(m.yarn_original_context,
                             ReadIntKey(g, a + "rope.scaling.original_context_length", 1, L::kMaxContext));
    // deepseek32 stores 0.1 mscale_all_dim (llama.cpp divides it by 0.1); glm-dsa never reads it.
    if (c->arch == Arch::kDeepseek32 && g.Find(a + "rope.scaling.yarn_log_multiplier")) {
      LINEAGE_ASSIGN_OR_RETURN(double mul, ReadPositiveDecimal(g, a + "rope.scaling.yarn_log_multiplier", 0.1, 1e2));
      m.yarn_mscale_all_dim = mul / 0.1;
    }
  } else if (scaling != nullptr && scaling->type == GgufType::kString && scaling->as_string != "none") {
    return Unsupported(g.path() + ": metadata '" + a + "rope.scaling.type' is '" + std::string(scaling->as_string) +
                       "' (latent attention scales its rotary dims by YaRN only)");
  }
  return Status::Ok();
}

// rope_scaling: none, or DeepSeek-V3.2's YaRN (latent-attention §1.5).
Status ReadRopeScaling(const JsonField& j, LatentConfig* m) {
  const JsonField scaling = j["rope_scaling"];
  if (!scaling.present()) return Status::Ok();
  LINEAGE_ASSIGN_OR_RETURN(std::string type, scaling["type"].StringOr(""));
  if (type.empty()) {
    LINEAGE_ASSIGN_OR_RETURN(type, scaling["rope_type"].StringOr("default"));
  }
  if (type == "default") return Status::Ok();
  if (type != "yarn")
    return Unsupported(j.file() + ": rope_scaling '" + type + "' (latent attention scales by YaRN only)");
  LINEAGE_ASSIGN_OR_RETURN(m->yarn_factor, scaling["factor"].PositiveFloatOr(1.0, 1e6));
  LINEAGE_ASSIGN_OR_RETURN(m->yarn_original_context, scaling["original_max_position_embeddings"].Int(1, L::kMaxContext));
  LINEAGE_ASSIGN_OR_RETURN(m->yarn_mscale_all_dim, scaling["mscale_all_dim"].PositiveFloatOr(1.0, 1e3));
  LINEAGE_ASSIGN_OR_RETURN(double mscale, scaling["mscale"].PositiveFloatOr(1.0, 1e3));
  if (mscale != 1.0) return scaling.Error("mscale 1 (the rotary gain llama.cpp applies)");
  return Status::Ok();
}

Status ReadHf(const JsonField& j, ModelConfig* c) {
  if (!c->latent()) return Status::Ok();
  LatentConfig& m = c->mla;
  const JsonField q_lora = j["q_lora_rank"];
  if (q_lora.present()) {
    if (c->arch == Arch::kKimiLinear) return Unsupported(j.file() + ": q_lora_rank (a low-rank MLA query)");
    LINEAGE_ASSIGN_OR_RETURN(m.q_lora_rank, q_lora.Int(1, L::kMaxHidden));
  }
  LINEAGE_ASSIGN_OR_RETURN(m.kv_lora_rank, j["kv_lora_rank"].Int(1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(m.qk_nope_dim, j["qk_nope_head_dim"].Int(1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(m.qk_rope_dim, j["qk_rope_head_dim"].Int(0, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(m.v_head_dim, j["v_head_dim"].Int(1, L::kMaxHeadDim));
  StateAttentionWidths(c);
  if (NopeLatent(c->arch)) {
    LINEAGE_ASSIGN_OR_RETURN(bool nope, j["mla_use_nope"].BoolOr(true));
    if (!nope) return Unsupported(j.file() + ": mla_use_nope false (rotary MLA)");
    return Status::Ok();
  }
  m.rope = true;
  return ReadRopeScaling(j, &m);
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (!c.latent()) return {};
  const LatentConfig& m = c.mla;
  std::vector<GgufKey> keys = {
      {a + "attention.key_length", static_cast<uint32_t>(m.latent_dim())},
      {a + "attention.value_length", static_cast<uint32_t>(m.kv_lora_rank)},
      {a + "attention.key_length_mla", static_cast<uint32_t>(m.qk_nope_dim + m.qk_rope_dim)},
      {a + "attention.value_length_mla", static_cast<uint32_t>(m.v_head_dim)},
      {a + "attention.kv_lora_rank", static_cast<uint32_t>(m.kv_lora_rank)},
      {a + "rope.dimension_count", static_cast<uint32_t>(m.qk_rope_dim)},
  };
  if (m.q_lora_rank > 0) keys.push_back({a + "attention.q_lora_rank", static_cast<uint32_t>(m.q_lora_rank)});
  if (m.yarn_factor > 0) {
    keys.push_back({a + "rope.scaling.type", std::string("yarn")});
    keys.push_back({a + "rope.scaling.factor", static_cast<float>(m.yarn_factor)});
    keys.push_back({a + "rope.scaling.original_context_length", static_cast<uint32_t>(m.yarn_original_context)});
    keys.push_back({a + "rope.scaling.yarn_log_multiplier", static_cast<float>(0.1 * m.yarn_mscale_all_dim)});
  }
  return keys;
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (!c.latent()) return;
  const LatentConfig& m = c.mla;
  t["kv_lora_rank"] = m.kv_lora_rank;
  if (KimiNamed(c.arch)) t["mla_use_nope"] = !m.rope;
  t["q_lora_rank"] = m.q_lora_rank > 0 ? nlohmann::ordered_json(m.q_lora_rank) : nlohmann::ordered_json(nullptr);
  t["qk_nope_head_dim"] = m.qk_nope_dim;
  t["qk_rope_head_dim"] = m.qk_rope_dim;
  if (m.yarn_factor > 0) {
    t["rope_scaling"] = {{"beta_fast", 32}, {"beta_slow", 1}, {"factor", m.yarn_factor}, {"mscale", 1.0},
                         {"mscale_all_dim", m.yarn_mscale_all_dim},
                         {"original_max_position_embeddings", m.yarn_original_context}, {"type", "yarn"}};
  } else {
    t["rope_scaling"] = nullptr;
  }
  t["v_head_dim"] = m.v_head_dim;
}

Status Validate(const ModelConfig& c) {
  if (!c.latent()) return Status::Ok();
  const LatentConfig& m = c.mla;
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "kv_lora_rank", m.kv_lora_rank, 1, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "qk_nope_dim", m.qk_nope_dim, 1, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "qk_rope_dim", m.qk_rope_dim, 0, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "v_head_dim", m.v_head_dim, 1, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "q_lora_rank", m.q_lora_rank, 0, L::kMaxHidden));
  if (c.head_dim != m.qk_nope_dim + m.qk_rope_dim || c.num_kv_heads != 1)
    return InvalidArgument(c.source_path + ": MLA key length " + std::to_string(c.head_dim) + " and " +
                           std::to_string(c.num_kv_heads) + " latent heads, expected qk_nope + qk_rope = " +
                           std::to_string(m.qk_nope_dim + m.qk_rope_dim) + " and 1");
  // The latent row is stored as two halves of a page's K and V rows
  // (docs/engine.md, "KV pages per layer kind").
  if (m.latent_dim() % 2 != 0)
    return InvalidArgument(c.source_path + ": latent width kv_lora_rank + qk_rope_dim = " +
                           std::to_string(m.latent_dim()) + " is odd");
  if (m.rope && m.qk_rope_dim % 2 != 0)
    return InvalidArgument(c.source_path + ": rotary latent dims " + std::to_string(m.qk_rope_dim) + " are odd");
  if (m.yarn_factor == 0) return Status::Ok();
  if (!(m.yarn_factor >= 1 && m.yarn_factor < 1e6) || !(m.yarn_mscale_all_dim >= 0 && m.yarn_mscale_all_dim < 1e3))
    return InvalidArgument(c.source_path + ": YaRN factor " + std::to_string(m.yarn_factor) + " / mscale_all_dim " +
                           std::to_string(m.yarn_mscale_all_dim) + " out of range");
  return CheckRange(c, "yarn_original_context", m.yarn_original_context, 1, L::kMaxContext);
}

std::vector<double> Fingerprint(const ModelConfig& c) {
  if (!c.latent()) return {};
  const LatentConfig& m = c.mla;
  return {static_cast<double>(m.kv_lora_rank), static_cast<double>(m.qk_nope_dim),
          static_cast<double>(m.qk_rope_dim),  static_cast<double>(m.v_head_dim),
          static_cast<double>(m.q_lora_rank),  static_cast<double>(m.rope),
          m.yarn_factor, static_cast<double>(m.yarn_original_context), m.yarn_mscale_all_dim};
}

}  // namespace

extern const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint};

}  // namespace lineage::kinds::latent_attention
