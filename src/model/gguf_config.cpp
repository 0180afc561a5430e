#include "model/gguf_config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>

#include "model/shapes.h"
#include "model/tensor_plan.h"

namespace lineage::model {
namespace {

// GGUF stores rope.freq_base and the norm epsilon as f32, while config.json
// holds the decimal the model was trained with (1e-6, not 9.99999997e-07).
// The shortest decimal that round-trips the f32 recovers it, so both
// formats of one model compute with the same constants.
Result<double> ReadDecimal(const GgufFile& g, const std::string& key, double fallback) {
  const GgufValue* v = g.Find(key);
  if (v == nullptr) return fallback;
  LINEAGE_ASSIGN_OR_RETURN(double x, g.GetFloat(key));
  if (v->type != GgufType::kFloat32) return x;
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(x));
  return std::strtod(std::string(buf, res.ptr).c_str(), nullptr);
}

}  // namespace

Result<ModelConfig> ParseGgufConfig(const GgufFile& g) {
  ModelConfig c;
  c.format = FileFormat::kGguf;
  c.source_path = g.path();
  LINEAGE_ASSIGN_OR_RETURN(std::string arch, g.GetString("general.architecture"));
  bool known = false;
  for (Arch candidate : {Arch::kQwen3_5, Arch::kQwen3, Arch::kQwen3_5Moe, Arch::kQwen3Next})
    if (arch == GgufArchName(candidate)) {
      c.arch = candidate;
      known = true;
    }
  if (!known)
    return Unsupported(g.path() + ": unknown architecture '" + arch +
                       "' (supported: qwen35, qwen3, qwen35moe, qwen3next)");
  const std::string a = arch + ".";
  auto opt_int = [&](const std::string& key, int64_t fallback) -> Result<int64_t> {
    if (!g.Find(key)) return fallback;
    return g.GetInt(key);
  };
  LINEAGE_ASSIGN_OR_RETURN(int64_t block_count, g.GetInt(a + "block_count"));
  LINEAGE_ASSIGN_OR_RETURN(int64_t nextn, opt_int(a + "nextn_predict_layers", 0));
  c.num_layers = block_count - nextn;
  LINEAGE_ASSIGN_OR_RETURN(c.hidden, g.GetInt(a + "embedding_length"));
  // A MoE model has no dense FFN; its feed_forward_length is informative.
  if (IsMoeArch(c.arch)) {
    LINEAGE_ASSIGN_OR_RETURN(c.intermediate, opt_int(a + "feed_forward_length", 0));
  } else {
    LINEAGE_ASSIGN_OR_RETURN(c.intermediate, g.GetInt(a + "feed_forward_length"));
  }
  LINEAGE_ASSIGN_OR_RETURN(c.context_length, opt_int(a + "context_length", 0));
  LINEAGE_ASSIGN_OR_RETURN(c.num_heads, g.GetInt(a + "attention.head_count"));
  LINEAGE_ASSIGN_OR_RETURN(c.num_kv_heads, opt_int(a + "attention.head_count_kv", c.num_heads));
  if (c.num_layers <= 0 || c.hidden <= 0 || c.num_heads <= 0 || c.num_kv_heads <= 0 ||
      c.num_heads % c.num_kv_heads != 0)
    return InvalidArgument(g.path() + ": inconsistent " + arch + " sizes (block_count, embedding_length, head counts)");
  LINEAGE_ASSIGN_OR_RETURN(c.head_dim, opt_int(a + "attention.key_length", c.hidden / c.num_heads));
  LINEAGE_ASSIGN_OR_RETURN(c.rope_dims, opt_int(a + "rope.dimension_count", c.head_dim));
  LINEAGE_ASSIGN_OR_RETURN(c.rope_theta, ReadDecimal(g, a + "rope.freq_base", 1e4));
  LINEAGE_ASSIGN_OR_RETURN(c.rms_eps, ReadDecimal(g, a + "attention.layer_norm_rms_epsilon", 1e-6));
  const GgufTensorInfo* embd = g.FindTensor("token_embd.weight");
  if (embd == nullptr) return NotFound(g.path() + ": tensor 'token_embd.weight' is missing");
  if (embd->ne.size() != 2) return InvalidArgument(g.path() + ": tensor 'token_embd.weight' is not 2-D");
  c.vocab = embd->ne[1];
  c.tied_embeddings = g.FindTensor("output.weight") == nullptr;

  if (IsHybrid(c.arch)) {
    c.attn_output_gate = true;
    c.v_head_order = GgufTilesVHeads(c.arch) ? VHeadOrder::kTiled : VHeadOrder::kGrouped;
    LINEAGE_ASSIGN_OR_RETURN(c.conv_kernel, g.GetInt(a + "ssm.conv_kernel"));
    LINEAGE_ASSIGN_OR_RETURN(c.lin_k_dim, g.GetInt(a + "ssm.state_size"));
    LINEAGE_ASSIGN_OR_RETURN(c.lin_num_k_heads, g.GetInt(a + "ssm.group_count"));
    LINEAGE_ASSIGN_OR_RETURN(c.lin_num_v_heads, g.GetInt(a + "ssm.time_step_rank"));
    LINEAGE_ASSIGN_OR_RETURN(int64_t inner, g.GetInt(a + "ssm.inner_size"));
    if (c.lin_num_k_heads <= 0 || c.lin_num_v_heads <= 0 || inner % c.lin_num_v_heads != 0 ||
        c.lin_num_v_heads % c.lin_num_k_heads != 0)
      return InvalidArgument(g.path() + ": inconsistent ssm.* keys (group_count, time_step_rank, inner_size)");
    c.lin_v_dim = inner / c.lin_num_v_heads;
    LINEAGE_ASSIGN_OR_RETURN(int64_t interval, opt_int(a + "full_attention_interval", 4));
    c.layer_kinds = LayerKindsFromInterval(c.num_layers, interval);
  } else {
    c.layer_kinds.assign(static_cast<size_t>(c.num_layers), LayerKind::kFullAttention);
  }
  if (IsMoeArch(c.arch)) {
    LINEAGE_ASSIGN_OR_RETURN(c.num_experts, g.GetInt(a + "expert_count"));
    LINEAGE_ASSIGN_OR_RETURN(c.experts_per_token, g.GetInt(a + "expert_used_count"));
    LINEAGE_ASSIGN_OR_RETURN(c.expert_intermediate, g.GetInt(a + "expert_feed_forward_length"));
    LINEAGE_ASSIGN_OR_RETURN(c.shared_intermediate, g.GetInt(a + "expert_shared_feed_forward_length"));
    if (c.num_experts <= 0 || c.experts_per_token <= 0 || c.experts_per_token > c.num_experts ||
        c.expert_intermediate <= 0 || c.shared_intermediate <= 0)
      return InvalidArgument(g.path() + ": inconsistent " + arch +
                             " expert keys (expert_count " + std::to_string(c.num_experts) + ", expert_used_count " +
                             std::to_string(c.experts_per_token) + ", expert widths)");
  }
  if (g.Find("tokenizer.ggml.bos_token_id")) {
    LINEAGE_ASSIGN_OR_RETURN(c.bos_token_id, g.GetInt("tokenizer.ggml.bos_token_id"));
  }
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    if (!g.Find(key)) continue;
    LINEAGE_ASSIGN_OR_RETURN(int64_t id, g.GetInt(key));
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(id);
  }
  return c;
}

}  // namespace lineage::model
