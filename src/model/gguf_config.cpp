#include "model/gguf_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <cstdlib>
#include <string>

#include "model/shapes.h"
#include "model/tensor_plan.h"

namespace lineage::model {

// An integer key in [min, max]; `fallback` when absent (NotFound without one).
// Unsigned values above 2^63 are reported as read, not as the negative
// number they would wrap to.
Result<int64_t> ReadIntKey(const GgufFile& g, const std::string& key, int64_t min, int64_t max,
                           std::optional<int64_t> fallback) {
  const GgufValue* v = g.Find(key);
  if (v == nullptr && fallback) return *fallback;
  LINEAGE_ASSIGN_OR_RETURN(int64_t x, g.GetInt(key));
  const bool huge = v->type == GgufType::kUint64 && v->as_uint > static_cast<uint64_t>(max);
  if (huge || x < min || x > max)
    return InvalidArgument(g.path() + ": metadata '" + key + "' is " +
                           (huge ? std::to_string(v->as_uint) : std::to_string(x)) + ", expected an integer in [" +
                           std::to_string(min) + ", " + std::to_string(max) + "]");
  return x;
}

namespace {

using L = ConfigLimits;

// GGUF stores rope.freq_base and the norm epsilon as f32, while config.json
// holds the decimal the model was trained with (1e-6, not 9.99999997e-07).
// The shortest decimal that round-trips the f32 recovers it, so both
// formats of one model compute with the same constants. The value must be
// finite and in (0, max].
Result<double> ReadPositiveDecimal(const GgufFile& g, const std::string& key, double fallback, double max) {
  const GgufValue* v = g.Find(key);
  if (v == nullptr) return fallback;
  LINEAGE_ASSIGN_OR_RETURN(double x, g.GetFloat(key));
  if (!std::isfinite(x) || !(x > 0) || x > max)
    return InvalidArgument(g.path() + ": metadata '" + key + "' is " + std::to_string(x) +
                           ", expected a finite number in (0, " + std::to_string(max) + "]");
  if (v->type != GgufType::kFloat32) return x;
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(x));
  return std::strtod(std::string(buf, res.ptr).c_str(), nullptr);
}

Status ReadKimiKeys(const GgufFile& g, const std::string& a, const std::vector<int64_t>& kv_heads, ModelConfig* c);

// The keys of the latent-attention archs (spec §7.5; latent-attention §3.1,
// §3.3): the layer kinds (a per-layer head_count_kv array: 0 KDA, 1 the
// latent MLA head; a scalar 1: every layer latent), the MLA widths, the KDA
// widths where there are KDA layers and the DeepSeek-V3 MoE (the indexer's
// are its kind's, src/kinds/sparse_latent_attention/).
Status ReadLatentKeys(const GgufFile& g, const std::string& a, ModelConfig* c) {
  const std::string kv_key = a + "attention.head_count_kv";
  const GgufValue* kv_value = g.Find(kv_key);
  std::vector<int64_t> kv_heads;
  if (kv_value != nullptr && kv_value->type != GgufType::kArray && c->arch != Arch::kKimiLinear &&
      c->arch != Arch::kKdaDsa && c->arch != Arch::kKimiK3) {
    LINEAGE_ASSIGN_OR_RETURN(int64_t one, ReadIntKey(g, kv_key, 1, 1));
    kv_heads.assign(static_cast<size_t>(c->num_layers), one);
  } else {
    LINEAGE_ASSIGN_OR_RETURN(kv_heads, g.GetIntArray(kv_key));
  }
  return ReadKimiKeys(g, a, kv_heads, c);
}

// Kimi Linear's keys (spec §7.5): the per-layer head_count_kv array gives the
// layer kinds (0 KDA, 1 the latent MLA head); MLA and KDA widths; the
// DeepSeek-V3 MoE.
Status ReadKimiKeys(const GgufFile& g, const std::string& a, const std::vector<int64_t>& kv_heads, ModelConfig* c) {
  if (static_cast<int64_t>(kv_heads.size()) != c->num_layers)
    return InvalidArgument(g.path() + ": metadata '" + a + "attention.head_count_kv' has " +
                           std::to_string(kv_heads.size()) + " entries for " + std::to_string(c->num_layers) +
                           " layers");
  c->layer_kinds.clear();
  for (size_t i = 0; i < kv_heads.size(); ++i) {
    if (kv_heads[i] != 0 && kv_heads[i] != 1)
      return InvalidArgument(g.path() + ": metadata '" + a + "attention.head_count_kv' is " +
                             std::to_string(kv_heads[i]) + " at layer " + std::to_string(i) +
                             ", expected 0 (KDA) or 1 (latent attention)");
    c->layer_kinds.push_back(kv_heads[i] == 0 ? LayerKind::kLinearAttention : LayerKind::kFullAttention);
  }
  c->num_kv_heads = 1;
  LINEAGE_ASSIGN_OR_RETURN(c->kv_lora_rank, ReadIntKey(g, a + "attention.kv_lora_rank", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(c->head_dim, ReadIntKey(g, a + "attention.key_length_mla", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(c->v_head_dim, ReadIntKey(g, a + "attention.value_length_mla", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(c->qk_rope_dim, ReadIntKey(g, a + "rope.dimension_count", 1, c->head_dim - 1));
  c->qk_nope_dim = c->head_dim - c->qk_rope_dim;
  c->rope_dims = c->qk_rope_dim;
  // The converter states the latent row as the MQA key length: it must agree.
  LINEAGE_ASSIGN_OR_RETURN(int64_t key_length, ReadIntKey(g, a + "attention.key_length", 1, 2 * L::kMaxHeadDim,
                                                       c->kv_lora_rank + c->qk_rope_dim));
  if (key_length != c->kv_lora_rank + c->qk_rope_dim)
    return InvalidArgument(g.path() + ": metadata '" + a + "attention.key_length' is " + std::to_string(key_length) +
                           " but the latent row is kv_lora_rank + rope.dimension_count = " +
                           std::to_string(c->kv_lora_rank + c->qk_rope_dim));
  if (std::count(kv_heads.begin(), kv_heads.end(), 0) > 0) {
    LINEAGE_ASSIGN_OR_RETURN(c->conv_kernel, ReadIntKey(g, a + "ssm.conv_kernel", 1, L::kMaxConvKernel));
    LINEAGE_ASSIGN_OR_RETURN(c->lin_k_dim, ReadIntKey(g, a + "kda.head_dim", 1, L::kMaxHeadDim));
    c->lin_v_dim = c->lin_k_dim;
    // Kimi's KDA has as many heads as its MLA (llama.cpp reads head_count for
    // both); the hybrid kda-dsa states its own.
    LINEAGE_ASSIGN_OR_RETURN(c->lin_num_k_heads, ReadIntKey(g, a + "kda.head_count", 1, L::kMaxHeads, c->num_heads));
    c->lin_num_v_heads = c->lin_num_k_heads;
  }
  if (c->arch == Arch::kKimiK3) {  // spec latent-attention §2, §3.3
    LINEAGE_ASSIGN_OR_RETURN(c->q_lora_rank, ReadIntKey(g, a + "attention.q_lora_rank", 0, L::kMaxHidden, 0));
    if (g.Find(a + "kda.gate_lower_bound")) {
      LINEAGE_ASSIGN_OR_RETURN(c->kda_gate_lower_bound, g.GetFloat(a + "kda.gate_lower_bound"));
    }
    LINEAGE_ASSIGN_OR_RETURN(c->expert_latent, ReadIntKey(g, a + "expert_latent_length", 0, L::kMaxHidden, 0));
    LINEAGE_ASSIGN_OR_RETURN(c->situ_beta, g.GetFloat(a + "activation.situ_beta"));
    LINEAGE_ASSIGN_OR_RETURN(c->situ_linear_beta, g.GetFloat(a + "activation.situ_linear_beta"));
    LINEAGE_ASSIGN_OR_RETURN(c->attn_res_block, ReadIntKey(g, a + "attn_res.block_size", 1, c->num_layers));
  } else if (c->arch != Arch::kKimiLinear) {  // glm-dsa, deepseek32, kda-dsa: rotary MLA with a query LoRA
    c->latent_rope = true;
    LINEAGE_ASSIGN_OR_RETURN(c->q_lora_rank, ReadIntKey(g, a + "attention.q_lora_rank", 0, L::kMaxHidden, 0));
    const GgufValue* scaling = g.Find(a + "rope.scaling.type");
    if (scaling != nullptr && scaling->type == GgufType::kString && scaling->as_string == "yarn") {
      LINEAGE_ASSIGN_OR_RETURN(c->yarn_factor, ReadPositiveDecimal(g, a + "rope.scaling.factor", 1.0, 1e6));
      LINEAGE_ASSIGN_OR_RETURN(c->yarn_original_context,
                               ReadIntKey(g, a + "rope.scaling.original_context_length", 1, L::kMaxContext));
      // deepseek32 stores 0.1 mscale_all_dim (llama.cpp divides it by 0.1); glm-dsa never reads it.
      if (c->arch == Arch::kDeepseek32 && g.Find(a + "rope.scaling.yarn_log_multiplier")) {
        LINEAGE_ASSIGN_OR_RETURN(double mul, ReadPositiveDecimal(g, a + "rope.scaling.yarn_log_multiplier", 0.1, 1e2));
        c->yarn_mscale_all_dim = mul / 0.1;
      }
    } else if (scaling != nullptr && scaling->type == GgufType::kString && scaling->as_string != "none") {
      return Unsupported(g.path() + ": metadata '" + a + "rope.scaling.type' is '" + std::string(scaling->as_string) +
                         "' (latent attention scales its rotary dims by YaRN only)");
    }
  }
  LINEAGE_ASSIGN_OR_RETURN(c->leading_dense_layers,
                           ReadIntKey(g, a + "leading_dense_block_count", 0, c->num_layers, 0));
  LINEAGE_ASSIGN_OR_RETURN(int64_t shared, ReadIntKey(g, a + "expert_shared_count", 1, 64, 1));
  LINEAGE_ASSIGN_OR_RETURN(c->expert_intermediate,
                           ReadIntKey(g, a + "expert_feed_forward_length", 1, L::kMaxIntermediate));
  c->shared_intermediate = shared * c->expert_intermediate;
  LINEAGE_ASSIGN_OR_RETURN(c->routed_scaling, ReadPositiveDecimal(g, a + "expert_weights_scale", 1.0, 1e6));
  const bool gating_required = c->arch == Arch::kDeepseek32;
  LINEAGE_ASSIGN_OR_RETURN(int64_t gating, gating_required ? ReadIntKey(g, a + "expert_gating_func", 0, 3)
                                                           : ReadIntKey(g, a + "expert_gating_func", 0, 3, 2));
  if (gating != 2)
    return Unsupported(g.path() + ": metadata '" + a + "expert_gating_func' is " + std::to_string(gating) +
                       " (only 2, sigmoid, is a DeepSeek-V3 router)");
  if (g.Find(a + "expert_weights_norm")) {
    LINEAGE_ASSIGN_OR_RETURN(c->routed_renormalise, g.GetBool(a + "expert_weights_norm"));
  }
  LINEAGE_ASSIGN_OR_RETURN(c->expert_groups, ReadIntKey(g, a + "expert_group_count", 1, L::kMaxExperts, 1));
  LINEAGE_ASSIGN_OR_RETURN(c->expert_groups_used,
                           ReadIntKey(g, a + "expert_group_used_count", 1, c->expert_groups, c->expert_groups));
  return Status::Ok();
}

}  // namespace

Result<ModelConfig> ParseGgufConfig(const GgufFile& g) {
  ModelConfig c;
  c.format = FileFormat::kGguf;
  c.source_path = g.path();
  LINEAGE_ASSIGN_OR_RETURN(std::string arch, g.GetString("general.architecture"));
  bool known = false;
  std::string supported;
  for (Arch candidate : kAllArchs) {
    supported += std::string(supported.empty() ? "" : ", ") + GgufArchName(candidate);
    if (arch == GgufArchName(candidate)) {
      c.arch = candidate;
      known = true;
    }
  }
  if (!known) return Unsupported(g.path() + ": unknown architecture '" + arch + "' (supported: " + supported + ")");
  const std::string a = arch + ".";
  LINEAGE_ASSIGN_OR_RETURN(int64_t block_count, ReadIntKey(g, a + "block_count", 1, L::kMaxLayers));
  // Every block has tensors of its own: a count above the directory's size
  // is corrupt, whatever the limit.
  if (block_count > static_cast<int64_t>(g.tensors().size()))
    return InvalidArgument(g.path() + ": metadata '" + a + "block_count' is " + std::to_string(block_count) +
                           " but the file holds " + std::to_string(g.tensors().size()) + " tensors");
  LINEAGE_ASSIGN_OR_RETURN(int64_t nextn, ReadIntKey(g, a + "nextn_predict_layers", 0, block_count - 1, 0));
  c.num_layers = block_count - nextn;
  c.mtp_layers = nextn;
  LINEAGE_ASSIGN_OR_RETURN(c.hidden, ReadIntKey(g, a + "embedding_length", 1, L::kMaxHidden));
  // A MoE model has no dense FFN (Kimi's leading layers aside); its
  // feed_forward_length is informative.
  if (IsMoeArch(c.arch) && !c.latent()) {
    LINEAGE_ASSIGN_OR_RETURN(c.intermediate, ReadIntKey(g, a + "feed_forward_length", 0, L::kMaxIntermediate, 0));
  } else {
    LINEAGE_ASSIGN_OR_RETURN(c.intermediate, ReadIntKey(g, a + "feed_forward_length", 1, L::kMaxIntermediate));
  }
  LINEAGE_ASSIGN_OR_RETURN(c.num_heads, ReadIntKey(g, a + "attention.head_count", 1, L::kMaxHeads));
  // Absent means "not stated" (0); a stated length must be usable. Read
  // before the latent keys: glm-dsa's indexer types default by it.
  LINEAGE_ASSIGN_OR_RETURN(c.context_length, ReadIntKey(g, a + "context_length", 1, L::kMaxContext, 0));
  if (c.latent()) {
    LINEAGE_RETURN_IF_ERROR(ReadLatentKeys(g, a, &c));
  } else {
    LINEAGE_ASSIGN_OR_RETURN(c.num_kv_heads, ReadIntKey(g, a + "attention.head_count_kv", 1, c.num_heads, c.num_heads));
    if (c.num_heads % c.num_kv_heads != 0)
      return InvalidArgument(g.path() + ": metadata '" + a + "attention.head_count_kv' (" +
                             std::to_string(c.num_kv_heads) + ") does not divide attention.head_count (" +
                             std::to_string(c.num_heads) + ")");
    LINEAGE_ASSIGN_OR_RETURN(c.head_dim,
                             ReadIntKey(g, a + "attention.key_length", 1, L::kMaxHeadDim, c.hidden / c.num_heads));
    LINEAGE_ASSIGN_OR_RETURN(c.rope_dims, ReadIntKey(g, a + "rope.dimension_count", 1, c.head_dim, c.head_dim));
  }
  LINEAGE_ASSIGN_OR_RETURN(c.rope_theta, ReadPositiveDecimal(g, a + "rope.freq_base", 1e4, L::kMaxRopeTheta));
  LINEAGE_ASSIGN_OR_RETURN(c.rms_eps,
                           ReadPositiveDecimal(g, a + "attention.layer_norm_rms_epsilon", 1e-6, L::kMaxRmsEps));
  const GgufTensorInfo* embd = g.FindTensor("token_embd.weight");
  if (embd == nullptr) return NotFound(g.path() + ": tensor 'token_embd.weight' is missing");
  if (embd->ne.size() != 2) return InvalidArgument(g.path() + ": tensor 'token_embd.weight' is not 2-D");
  c.vocab = embd->ne[1];
  c.tied_embeddings = g.FindTensor("output.weight") == nullptr;

  if (IsHybrid(c.arch)) {
    c.attn_output_gate = true;
    c.v_head_order = GgufTilesVHeads(c.arch) ? VHeadOrder::kTiled : VHeadOrder::kGrouped;
    LINEAGE_ASSIGN_OR_RETURN(c.conv_kernel, ReadIntKey(g, a + "ssm.conv_kernel", 1, L::kMaxConvKernel));
    LINEAGE_ASSIGN_OR_RETURN(c.lin_k_dim, ReadIntKey(g, a + "ssm.state_size", 1, L::kMaxHeadDim));
    LINEAGE_ASSIGN_OR_RETURN(c.lin_num_k_heads, ReadIntKey(g, a + "ssm.group_count", 1, L::kMaxHeads));
    LINEAGE_ASSIGN_OR_RETURN(c.lin_num_v_heads, ReadIntKey(g, a + "ssm.time_step_rank", 1, L::kMaxHeads));
    LINEAGE_ASSIGN_OR_RETURN(int64_t inner,
                             ReadIntKey(g, a + "ssm.inner_size", 1, L::kMaxHeads * L::kMaxHeadDim));
    if (inner % c.lin_num_v_heads != 0 || c.lin_num_v_heads % c.lin_num_k_heads != 0)
      return InvalidArgument(g.path() + ": inconsistent ssm.* keys (group_count, time_step_rank, inner_size)");
    c.lin_v_dim = inner / c.lin_num_v_heads;
    LINEAGE_ASSIGN_OR_RETURN(int64_t interval, ReadIntKey(g, a + "full_attention_interval", 1, L::kMaxLayers, 4));
    c.layer_kinds = LayerKindsFromInterval(c.num_layers, interval);
  } else if (!c.latent()) {
    c.layer_kinds.assign(static_cast<size_t>(c.num_layers), LayerKind::kFullAttention);
  }
  if (IsMoeArch(c.arch)) {
    LINEAGE_ASSIGN_OR_RETURN(c.num_experts, ReadIntKey(g, a + "expert_count", 1, L::kMaxExperts));
    LINEAGE_ASSIGN_OR_RETURN(c.experts_per_token, ReadIntKey(g, a + "expert_used_count", 1, c.num_experts));
  }
  if (IsMoeArch(c.arch) && !c.latent()) {
    LINEAGE_ASSIGN_OR_RETURN(c.expert_intermediate,
                             ReadIntKey(g, a + "expert_feed_forward_length", 1, L::kMaxIntermediate));
    LINEAGE_ASSIGN_OR_RETURN(c.shared_intermediate,
                             ReadIntKey(g, a + "expert_shared_feed_forward_length", 1, L::kMaxIntermediate));
  }
  LINEAGE_ASSIGN_OR_RETURN(c.bos_token_id, ReadIntKey(g, "tokenizer.ggml.bos_token_id", 0, L::kMaxTokenId, -1));
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    if (!g.Find(key)) continue;
    LINEAGE_ASSIGN_OR_RETURN(int64_t id, ReadIntKey(g, key, 0, L::kMaxTokenId));
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(id);
  }
  for (const KindConfig* k : KindConfigs())  // the kinds' own keys (model/layer_kinds.h)
    if (k->read_gguf) LINEAGE_RETURN_IF_ERROR(k->read_gguf(g, a, &c));
  LINEAGE_RETURN_IF_ERROR(ValidateConfig(c));
  return c;
}

}  // namespace lineage::model
