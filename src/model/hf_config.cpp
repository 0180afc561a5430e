#include "model/hf_config.h"

#include <algorithm>

namespace lineage::model {
namespace {

using Json = nlohmann::json;

struct Reader {
  const Json& j;
  const std::string& path;
  Status error;

  int64_t Int(const char* key, int64_t fallback = -1, bool required = true) {
    if (!j.contains(key) || j[key].is_null()) {
      if (required && error.ok()) error = InvalidArgument(path + ": config key '" + key + "' is missing");
      return fallback;
    }
    if (!j[key].is_number_integer()) {
      if (error.ok()) error = InvalidArgument(path + ": config key '" + key + "' is not an integer");
      return fallback;
    }
    return j[key].get<int64_t>();
  }
  double Float(const Json& obj, const char* key, double fallback) {
    if (!obj.contains(key) || obj[key].is_null()) return fallback;
    if (!obj[key].is_number()) {
      if (error.ok()) error = InvalidArgument(path + ": config key '" + key + "' is not a number");
      return fallback;
    }
    return obj[key].get<double>();
  }
};

void AddIds(const Json& v, std::vector<int64_t>* ids) {
  auto add = [&](const Json& x) {
    if (x.is_number_integer() && std::find(ids->begin(), ids->end(), x.get<int64_t>()) == ids->end())
      ids->push_back(x.get<int64_t>());
  };
  if (v.is_array()) {
    for (const Json& x : v) add(x);
  } else {
    add(v);
  }
}

const char* TorchDType(DType t) {
  switch (t) {
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    default: return "float32";
  }
}

}  // namespace

Result<ModelConfig> ParseHfConfig(const Json& root, const std::string& path) {
  if (!root.is_object()) return InvalidArgument(path + ": config.json is not a JSON object");
  const bool nested = root.contains("text_config") && root["text_config"].is_object();
  const Json& j = nested ? root["text_config"] : root;
  std::string arch_name;
  if (root.contains("architectures") && root["architectures"].is_array() && !root["architectures"].empty() &&
      root["architectures"][0].is_string())
    arch_name = root["architectures"][0].get<std::string>();
  std::string model_type = j.value("model_type", root.value("model_type", std::string()));

  ModelConfig c;
  c.format = FileFormat::kSafetensors;
  c.source_path = path;
  if (arch_name == "Qwen3_5ForConditionalGeneration" || arch_name == "Qwen3_5ForCausalLM" ||
      model_type == "qwen3_5" || model_type == "qwen3_5_text") {
    c.arch = Arch::kQwen3_5;
  } else if (arch_name == "Qwen3_5MoeForConditionalGeneration" || arch_name == "Qwen3_5MoeForCausalLM" ||
             model_type == "qwen3_5_moe" || model_type == "qwen3_5_moe_text") {
    c.arch = Arch::kQwen3_5Moe;
  } else if (arch_name == "Qwen3NextForCausalLM" || model_type == "qwen3_next") {
    c.arch = Arch::kQwen3Next;
  } else if (arch_name == "Qwen3ForCausalLM" || model_type == "qwen3") {
    c.arch = Arch::kQwen3;
  } else {
    return Unsupported(path + ": unknown architecture '" + (arch_name.empty() ? model_type : arch_name) +
                       "' (supported: Qwen3_5ForConditionalGeneration, Qwen3_5ForCausalLM, "
                       "Qwen3_5MoeForConditionalGeneration, Qwen3NextForCausalLM, Qwen3ForCausalLM)");
  }

  Reader r{j, path, Status::Ok()};
  c.hidden = r.Int("hidden_size");
  c.num_layers = r.Int("num_hidden_layers");
  c.intermediate = r.Int("intermediate_size", 0, !IsMoeArch(c.arch));
  c.vocab = r.Int("vocab_size");
  c.context_length = r.Int("max_position_embeddings", 0, false);
  c.rms_eps = r.Float(j, "rms_norm_eps", 1e-6);
  c.num_heads = r.Int("num_attention_heads");
  c.num_kv_heads = r.Int("num_key_value_heads", c.num_heads, false);
  c.head_dim = r.Int("head_dim", c.num_heads > 0 ? c.hidden / c.num_heads : 0, false);
  bool tied = j.value("tie_word_embeddings", false);
  if (root.contains("tie_word_embeddings") && root["tie_word_embeddings"].is_boolean())
    tied = root["tie_word_embeddings"].get<bool>();
  c.tied_embeddings = tied;

  const Json* rope = j.contains("rope_parameters") && j["rope_parameters"].is_object() ? &j["rope_parameters"] : nullptr;
  const Json& rope_src = rope ? *rope : j;
  c.rope_theta = r.Float(rope_src, "rope_theta", r.Float(j, "rope_theta", 1e4));
  if (IsHybrid(c.arch)) {
    const double partial = r.Float(rope_src, "partial_rotary_factor", r.Float(j, "partial_rotary_factor", 0.25));
    c.rope_dims = static_cast<int64_t>(static_cast<double>(c.head_dim) * partial);
    c.attn_output_gate = j.value("attn_output_gate", true);
    c.zero_centred_norms = true;
    c.lin_num_k_heads = r.Int("linear_num_key_heads");
    c.lin_num_v_heads = r.Int("linear_num_value_heads");
    c.lin_k_dim = r.Int("linear_key_head_dim");
    c.lin_v_dim = r.Int("linear_value_head_dim");
    c.conv_kernel = r.Int("linear_conv_kernel_dim", 4, false);
    if (IsMoeArch(c.arch)) {
      c.num_experts = r.Int("num_experts");
      c.experts_per_token = r.Int("num_experts_per_tok");
      c.expert_intermediate = r.Int("moe_intermediate_size");
      c.shared_intermediate = r.Int("shared_expert_intermediate_size");
      // Every layer is sparse in the released models; other mixes are not.
      if (r.Int("decoder_sparse_step", 1, false) != 1 ||
          (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array() && !j["mlp_only_layers"].empty()))
        return Unsupported(path + ": dense layers inside a MoE model (decoder_sparse_step, mlp_only_layers)");
      if (j.contains("norm_topk_prob") && j["norm_topk_prob"].is_boolean() && !j["norm_topk_prob"].get<bool>())
        return Unsupported(path + ": norm_topk_prob false (routing weights that do not sum to 1)");
    }
  } else {
    c.rope_dims = c.head_dim;
  }
  if (!r.error.ok()) return r.error;
  if (c.hidden <= 0 || c.num_layers <= 0 || c.vocab <= 0 || c.num_heads <= 0 || c.num_kv_heads <= 0 ||
      c.head_dim <= 0 || c.num_heads % c.num_kv_heads != 0)
    return InvalidArgument(path + ": inconsistent sizes (hidden_size, num_hidden_layers, vocab_size, heads)");

  if (c.moe() && (c.experts_per_token <= 0 || c.experts_per_token > c.num_experts || c.expert_intermediate <= 0 ||
                   c.shared_intermediate <= 0))
    return InvalidArgument(path + ": inconsistent expert sizes (num_experts " + std::to_string(c.num_experts) +
                           ", num_experts_per_tok " + std::to_string(c.experts_per_token) + ")");
  if (IsHybrid(c.arch)) {
    if (c.lin_num_k_heads <= 0 || c.lin_num_v_heads % c.lin_num_k_heads != 0)
      return InvalidArgument(path + ": linear_num_value_heads must be a multiple of linear_num_key_heads");
    if (j.contains("layer_types") && j["layer_types"].is_array()) {
      const Json& lt = j["layer_types"];
      if (static_cast<int64_t>(lt.size()) != c.num_layers)
        return InvalidArgument(path + ": layer_types has " + std::to_string(lt.size()) + " entries, expected " +
                               std::to_string(c.num_layers));
      for (const Json& t : lt) {
        std::string s = t.is_string() ? t.get<std::string>() : "";
        if (s == "full_attention") c.layer_kinds.push_back(LayerKind::kFullAttention);
        else if (s == "linear_attention") c.layer_kinds.push_back(LayerKind::kLinearAttention);
        else return InvalidArgument(path + ": layer_types has an unknown entry '" + s + "'");
      }
    } else {
      c.layer_kinds = LayerKindsFromInterval(c.num_layers, r.Int("full_attention_interval", 4, false));
    }
  } else {
    c.layer_kinds.assign(static_cast<size_t>(c.num_layers), LayerKind::kFullAttention);
  }
  if (!r.error.ok()) return r.error;
  if (j.contains("bos_token_id") && j["bos_token_id"].is_number_integer()) c.bos_token_id = j["bos_token_id"];
  if (j.contains("eos_token_id")) AddIds(j["eos_token_id"], &c.eos_token_ids);
  return c;
}

void MergeGenerationConfig(const Json& j, ModelConfig* c) {
  if (j.is_object() && j.contains("eos_token_id")) AddIds(j["eos_token_id"], &c->eos_token_ids);
}

nlohmann::ordered_json MakeHfConfig(const ModelSpec& spec, const VocabData& vocab, DType dtype) {
  const ModelConfig& c = spec.config;
  const bool hybrid = IsHybrid(c.arch), next = c.arch == Arch::kQwen3Next;
  nlohmann::ordered_json t;
  if (c.arch == Arch::kQwen3) t["architectures"] = {"Qwen3ForCausalLM"};
  if (next) t["architectures"] = {"Qwen3NextForCausalLM"};
  t["attention_bias"] = false;
  t["attention_dropout"] = 0.0;
  if (hybrid && !next) t["attn_output_gate"] = c.attn_output_gate;
  if (vocab.bos_id >= 0) t["bos_token_id"] = vocab.bos_id;
  t["eos_token_id"] = vocab.eos_id;
  if (c.moe()) t["decoder_sparse_step"] = 1;
  if (hybrid) t["full_attention_interval"] = 4;
  t["head_dim"] = c.head_dim;
  t["hidden_act"] = "silu";
  t["hidden_size"] = c.hidden;
  t["initializer_range"] = 0.02;
  if (c.intermediate > 0) t["intermediate_size"] = c.intermediate;
  if (hybrid) {
    std::vector<std::string> types;
    for (LayerKind k : c.layer_kinds) types.push_back(k == LayerKind::kFullAttention ? "full_attention" : "linear_attention");
    t["layer_types"] = types;
    t["linear_conv_kernel_dim"] = c.conv_kernel;
    t["linear_key_head_dim"] = c.lin_k_dim;
    t["linear_num_key_heads"] = c.lin_num_k_heads;
    t["linear_num_value_heads"] = c.lin_num_v_heads;
    t["linear_value_head_dim"] = c.lin_v_dim;
    t["mamba_ssm_dtype"] = "float32";
  }
  t["max_position_embeddings"] = c.context_length;
  if (c.moe()) {
    t["mlp_only_layers"] = nlohmann::ordered_json::array();
    t["moe_intermediate_size"] = c.expert_intermediate;
  }
  const char* model_type = c.arch == Arch::kQwen3_5 ? "qwen3_5_text" : c.arch == Arch::kQwen3_5Moe ? "qwen3_5_moe_text"
                           : next ? "qwen3_next" : "qwen3";
  t["model_type"] = model_type;
  if (hybrid) t["mtp_num_hidden_layers"] = 0;  // no MTP weights are written
  if (next) t["norm_topk_prob"] = true;
  if (c.moe()) {
    t["num_experts"] = c.num_experts;
    t["num_experts_per_tok"] = c.experts_per_token;
  }
  t["num_attention_heads"] = c.num_heads;
  t["num_hidden_layers"] = c.num_layers;
  t["num_key_value_heads"] = c.num_kv_heads;
  t["pad_token_id"] = vocab.pad_id >= 0 ? nlohmann::ordered_json(vocab.pad_id) : nlohmann::ordered_json(nullptr);
  t["rms_norm_eps"] = c.rms_eps;
  if (next) {  // Qwen3-Next keeps rope at the top level (spec §1.1)
    t["partial_rotary_factor"] = static_cast<double>(c.rope_dims) / static_cast<double>(c.head_dim);
    t["rope_scaling"] = nullptr;
    t["rope_theta"] = c.rope_theta;
  } else if (hybrid) {
    t["rope_parameters"] = {{"mrope_interleaved", true},
                            {"mrope_section", spec.mrope_sections},
                            {"partial_rotary_factor", static_cast<double>(c.rope_dims) / static_cast<double>(c.head_dim)},
                            {"rope_theta", c.rope_theta},
                            {"rope_type", "default"}};
  } else {
    t["rope_scaling"] = nullptr;
    t["rope_theta"] = c.rope_theta;
    t["sliding_window"] = nullptr;
  }
  if (c.moe()) t["shared_expert_intermediate_size"] = c.shared_intermediate;
  t["tie_word_embeddings"] = c.tied_embeddings;
  t["torch_dtype"] = TorchDType(dtype);
  t["use_cache"] = true;
  if (c.arch == Arch::kQwen3) t["use_sliding_window"] = false;
  t["vocab_size"] = c.vocab;
  if (c.arch == Arch::kQwen3 || next) return t;

  const bool moe = c.arch == Arch::kQwen3_5Moe;
  nlohmann::ordered_json root;
  root["architectures"] = {moe ? "Qwen3_5MoeForConditionalGeneration" : "Qwen3_5ForConditionalGeneration"};
  root["model_type"] = moe ? "qwen3_5_moe" : "qwen3_5";
  root["text_config"] = t;
  root["tie_word_embeddings"] = c.tied_embeddings;
  root["torch_dtype"] = TorchDType(dtype);
  return root;
}

nlohmann::ordered_json MakeGenerationConfig(const VocabData& vocab) {
  nlohmann::ordered_json g;
  if (vocab.bos_id >= 0) g["bos_token_id"] = vocab.bos_id;
  std::vector<int64_t> eos = {vocab.eos_id};
  if (vocab.pad_id >= 0 && vocab.pad_id != vocab.eos_id) eos.push_back(vocab.pad_id);
  g["do_sample"] = true;
  g["eos_token_id"] = eos;
  if (vocab.pad_id >= 0) g["pad_token_id"] = vocab.pad_id;
  g["temperature"] = 0.6;
  g["top_k"] = 20;
  g["top_p"] = 0.95;
  return g;
}

}  // namespace lineage::model
