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

namespace {

using L = ConfigLimits;

// The latent-attention archs' layer kinds (spec §7.5; latent-attention
// §3.1, §3.3): a per-layer head_count_kv array, 0 KDA and 1 the latent MLA
// head, or a scalar 1: every layer latent; and K3's Block AttnRes. The
// widths are their kinds' (src/kinds/).
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
  if (static_cast<int64_t>(kv_heads.size()) != c->num_layers)
    return InvalidArgument(g.path() + ": metadata '" + kv_key + "' has " + std::to_string(kv_heads.size()) +
                           " entries for " + std::to_string(c->num_layers) + " layers");
  std::vector<LayerKind> flags;
  for (size_t i = 0; i < kv_heads.size(); ++i) {
    if (kv_heads[i] != 0 && kv_heads[i] != 1)
      return InvalidArgument(g.path() + ": metadata '" + kv_key + "' is " + std::to_string(kv_heads[i]) +
                             " at layer " + std::to_string(i) + ", expected 0 (KDA) or 1 (latent attention)");
    flags.push_back(kv_heads[i] == 0 ? LayerKind::kLinearAttention : LayerKind::kFullAttention);
  }
  c->layers = StackLayers(c->arch, flags);
  if (c->arch == Arch::kKimiK3) {  // Block AttnRes (spec latent-attention §2)
    LINEAGE_ASSIGN_OR_RETURN(c->attn_res_block, ReadIntKey(g, a + "attn_res.block_size", 1, c->num_layers));
  }
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
    LINEAGE_ASSIGN_OR_RETURN(int64_t interval, ReadIntKey(g, a + "full_attention_interval", 1, L::kMaxLayers, 4));
    c.layers = StackLayers(c.arch, LayerKindsFromInterval(c.num_layers, interval));
  } else if (!c.latent()) {
    c.layers = AttentionLayers(c.arch, c.num_layers);
  }
  LINEAGE_ASSIGN_OR_RETURN(c.bos_token_id, ReadIntKey(g, "tokenizer.ggml.bos_token_id", 0, L::kMaxTokenId, -1));
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    if (!g.Find(key)) continue;
    LINEAGE_ASSIGN_OR_RETURN(int64_t id, ReadIntKey(g, key, 0, L::kMaxTokenId));
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(id);
  }
  // The kinds' own keys (model/layer_kinds.h), after the layer kinds and
  // the attention widths, which some of them read.
  for (const KindConfig* k : KindConfigs())
    if (k->read_gguf) LINEAGE_RETURN_IF_ERROR(k->read_gguf(g, a, &c));
  RefineLayers(&c);
  LINEAGE_RETURN_IF_ERROR(ValidateConfig(c));
  return c;
}

}  // namespace lineage::model
