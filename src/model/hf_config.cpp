#include "model/hf_config.h"

#include <algorithm>

#include "model/json_field.h"

namespace lineage::model {

// An array of `num_layers` strings, each `a` or `b`: (*is_a)[l] says which.
Status ReadLayerChoices(const JsonField& types, int64_t num_layers, const std::string& what, const std::string& a,
                        const std::string& b, std::vector<bool>* is_a) {
  if (!types.is_array() || static_cast<int64_t>(types.raw()->size()) != num_layers)
    return types.Error("an array of " + std::to_string(num_layers) + " " + what + " (num_hidden_layers)");
  is_a->clear();
  return types.ForEachItem([&](const JsonField& t) -> Status {
    const std::string expected = "\"" + a + "\" or \"" + b + "\"";
    if (!t.is_string()) return t.Error(expected);
    const std::string v = t.raw()->get<std::string>();
    if (v != a && v != b) return t.Error(expected);
    is_a->push_back(v == a);
    return Status::Ok();
  });
}

namespace {

using Json = nlohmann::json;
using L = ConfigLimits;

// Adds generation / config eos_token_id (an integer or a list of them).
Status AddIds(const JsonField& f, std::vector<int64_t>* ids) {
  auto add = [&](const JsonField& x) -> Status {
    LINEAGE_ASSIGN_OR_RETURN(int64_t id, x.Int(0, L::kMaxTokenId));
    if (std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
    return Status::Ok();
  };
  if (!f.present()) return Status::Ok();
  if (f.is_array()) return f.ForEachItem(add);
  return add(f);
}

const char* TorchDType(DType t) {
  switch (t) {
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    default: return "float32";
  }
}

Result<Arch> ReadArch(const JsonField& root, const JsonField& j) {
  std::string arch_name;
  const JsonField archs = root["architectures"];
  if (archs.present()) {
    LINEAGE_RETURN_IF_ERROR(archs.ForEachItem([&](const JsonField& a) -> Status {
      if (!arch_name.empty()) return Status::Ok();
      LINEAGE_ASSIGN_OR_RETURN(arch_name, a.String());
      return Status::Ok();
    }));
  }
  LINEAGE_ASSIGN_OR_RETURN(std::string root_type, root["model_type"].StringOr(""));
  std::string model_type = root_type;
  if (&j != &root) {
    LINEAGE_ASSIGN_OR_RETURN(model_type, j["model_type"].StringOr(root_type));
  }
  // K3's text_config calls itself KimiLinearForCausalLM / kimi_linear (spec
  // latent-attention §3.3): the top level decides, before Kimi Linear's names.
  if (arch_name == "KimiK3ForConditionalGeneration" || root_type == "kimi_k3") return Arch::kKimiK3;
  if (arch_name == "Qwen3_5ForConditionalGeneration" || arch_name == "Qwen3_5ForCausalLM" ||
      model_type == "qwen3_5" || model_type == "qwen3_5_text")
    return Arch::kQwen3_5;
  if (arch_name == "Qwen3_5MoeForConditionalGeneration" || arch_name == "Qwen3_5MoeForCausalLM" ||
      model_type == "qwen3_5_moe" || model_type == "qwen3_5_moe_text")
    return Arch::kQwen3_5Moe;
  if (arch_name == "Qwen3NextForCausalLM" || model_type == "qwen3_next") return Arch::kQwen3Next;
  if (arch_name == "Qwen3ForCausalLM" || model_type == "qwen3") return Arch::kQwen3;
  if (arch_name == "KimiLinearForCausalLM" || model_type == "kimi_linear") return Arch::kKimiLinear;
  if (arch_name == "GlmMoeDsaForCausalLM" || model_type == "glm_moe_dsa") return Arch::kGlmDsa;
  if (arch_name == "DeepseekV32ForCausalLM" || model_type == "deepseek_v32") return Arch::kDeepseek32;
  if (arch_name == "KdaDsaForCausalLM" || model_type == "kda_dsa") return Arch::kKdaDsa;
  return Unsupported(root.file() + ": unknown architecture '" + (arch_name.empty() ? model_type : arch_name) +
                     "' (supported: Qwen3_5ForConditionalGeneration, Qwen3_5ForCausalLM, "
                     "Qwen3_5MoeForConditionalGeneration, Qwen3NextForCausalLM, Qwen3ForCausalLM, "
                     "KimiLinearForCausalLM, GlmMoeDsaForCausalLM, DeepseekV32ForCausalLM, KdaDsaForCausalLM, "
                     "KimiK3ForConditionalGeneration)");
}

Status ReadLayerKinds(const JsonField& j, ModelConfig* c) {
  const JsonField types = j["layer_types"];
  if (!types.present()) {
    LINEAGE_ASSIGN_OR_RETURN(int64_t interval, j["full_attention_interval"].IntOr(4, 1, L::kMaxLayers));
    c->layers = StackLayers(c->arch, LayerKindsFromInterval(c->num_layers, interval));
    return Status::Ok();
  }
  std::vector<bool> full;
  LINEAGE_RETURN_IF_ERROR(ReadLayerChoices(types, c->num_layers, "layer types", "full_attention", "linear_attention", &full));
  std::vector<LayerKind> flags;
  for (bool f : full) flags.push_back(f ? LayerKind::kFullAttention : LayerKind::kLinearAttention);
  c->layers = StackLayers(c->arch, flags);
  return Status::Ok();
}

// The 1-indexed layer lists of linear_attn_config (spec §7.1): every layer
// in exactly one of kda_layers and full_attn_layers.
Status ReadKimiLayerKinds(const JsonField& lin, ModelConfig* c) {
  std::vector<int> seen(static_cast<size_t>(c->num_layers), 0);
  std::vector<LayerKind> flags(static_cast<size_t>(c->num_layers), LayerKind::kLinearAttention);
  for (const char* key : {"kda_layers", "full_attn_layers"}) {
    const bool full = std::string(key) == "full_attn_layers";
    const JsonField list = lin[key];
    if (!list.is_array()) return list.Error("an array of 1-indexed layer numbers");
    LINEAGE_RETURN_IF_ERROR(list.ForEachItem([&](const JsonField& item) -> Status {
      LINEAGE_ASSIGN_OR_RETURN(int64_t n, item.Int(1, c->num_layers));
      if (seen[n - 1]++) return item.Error("a layer listed once in kda_layers and full_attn_layers");
      if (full) flags[n - 1] = LayerKind::kFullAttention;
      return Status::Ok();
    }));
  }
  for (int64_t i = 0; i < c->num_layers; ++i)
    if (!seen[i]) return lin.Error("every layer in kda_layers or full_attn_layers (layer " + std::to_string(i + 1) +
                                   " is in neither)");
  c->layers = StackLayers(c->arch, flags);
  return Status::Ok();
}

// The latent archs' config.json (spec §7.1; latent-attention §3.1, §3.3):
// the dense width, Kimi's context length and the layer kinds from
// linear_attn_config where there are KDA layers (kimi_linear, kda_dsa,
// kimi_k3), and K3's Block AttnRes. The widths are their kinds'
// (src/kinds/).
Status ReadLatentConfig(const JsonField& j, ModelConfig* c) {
  LINEAGE_ASSIGN_OR_RETURN(c->intermediate, j["intermediate_size"].Int(1, L::kMaxIntermediate));
  if (NopeLatent(c->arch)) {
    LINEAGE_ASSIGN_OR_RETURN(c->context_length, j["model_max_length"].IntOr(c->context_length, 1, L::kMaxContext));
  }
  if (c->arch == Arch::kKimiK3) {
    LINEAGE_ASSIGN_OR_RETURN(c->attn_res_block, j["attn_res_block_size"].Int(1, c->num_layers));
  }
  if (!KimiNamed(c->arch)) {
    c->layers = AttentionLayers(c->arch, c->num_layers);
    return Status::Ok();
  }
  const JsonField lin = j["linear_attn_config"];
  if (!lin.is_object()) return lin.Error("an object");
  return ReadKimiLayerKinds(lin, c);
}

}  // namespace

Result<ModelConfig> ParseHfConfig(const Json& root_json, const std::string& path) {
  const JsonField root(root_json, path);
  if (!root.is_object()) return root.Error("a JSON object");
  const JsonField text_config = root["text_config"];
  if (text_config.present() && !text_config.is_object()) return text_config.Error("an object");
  const JsonField& j = text_config.present() ? text_config : root;

  ModelConfig c;
  c.format = FileFormat::kSafetensors;
  c.source_path = path;
  LINEAGE_ASSIGN_OR_RETURN(c.arch, ReadArch(root, j));

  LINEAGE_ASSIGN_OR_RETURN(c.hidden, j["hidden_size"].Int(1, L::kMaxHidden));
  LINEAGE_ASSIGN_OR_RETURN(c.num_layers, j["num_hidden_layers"].Int(1, L::kMaxLayers));
  // Qwen names its MTP blocks mtp_num_hidden_layers, DeepSeek and GLM
  // num_nextn_predict_layers (a block at index L of model.layers).
  LINEAGE_ASSIGN_OR_RETURN(c.mtp_layers, j[IsHybrid(c.arch) ? "mtp_num_hidden_layers" : "num_nextn_predict_layers"]
                                             .IntOr(0, 0, L::kMaxLayers));
  // A MoE model has no dense FFN; its intermediate_size is informative.
  if (c.latent()) {
    // ReadLatentConfig, below.
  } else if (IsMoeArch(c.arch)) {
    LINEAGE_ASSIGN_OR_RETURN(c.intermediate, j["intermediate_size"].IntOr(0, 0, L::kMaxIntermediate));
  } else {
    LINEAGE_ASSIGN_OR_RETURN(c.intermediate, j["intermediate_size"].Int(1, L::kMaxIntermediate));
  }
  LINEAGE_ASSIGN_OR_RETURN(c.vocab, j["vocab_size"].Int(1, L::kMaxVocab));
  // Absent means "not stated" (0); a stated length must be usable.
  LINEAGE_ASSIGN_OR_RETURN(c.context_length, j["max_position_embeddings"].IntOr(0, 1, L::kMaxContext));
  LINEAGE_ASSIGN_OR_RETURN(c.rms_eps, j["rms_norm_eps"].PositiveFloatOr(1e-6, L::kMaxRmsEps));
  LINEAGE_ASSIGN_OR_RETURN(c.num_heads, j["num_attention_heads"].Int(1, L::kMaxHeads));
  LINEAGE_ASSIGN_OR_RETURN(c.num_kv_heads, j["num_key_value_heads"].IntOr(c.num_heads, 1, c.num_heads));
  if (c.num_heads % c.num_kv_heads != 0 && !c.latent())
    return j["num_key_value_heads"].Error("a divisor of num_attention_heads (" + std::to_string(c.num_heads) + ")");
  LINEAGE_ASSIGN_OR_RETURN(c.head_dim, j["head_dim"].IntOr(c.hidden / c.num_heads, 1, L::kMaxHeadDim));
  // The top-level tie_word_embeddings wins over text_config's.
  LINEAGE_ASSIGN_OR_RETURN(c.tied_embeddings, j["tie_word_embeddings"].BoolOr(false));
  if (&j != &root) {
    LINEAGE_ASSIGN_OR_RETURN(c.tied_embeddings, root["tie_word_embeddings"].BoolOr(c.tied_embeddings));
  }

  const JsonField rope_parameters = j["rope_parameters"];
  if (rope_parameters.present() && !rope_parameters.is_object()) return rope_parameters.Error("an object");
  const JsonField& rope_src = rope_parameters.present() ? rope_parameters : j;
  LINEAGE_ASSIGN_OR_RETURN(double theta, j["rope_theta"].PositiveFloatOr(1e4, L::kMaxRopeTheta));
  LINEAGE_ASSIGN_OR_RETURN(c.rope_theta, rope_src["rope_theta"].PositiveFloatOr(theta, L::kMaxRopeTheta));
  if (IsHybrid(c.arch)) {
    LINEAGE_ASSIGN_OR_RETURN(double partial, j["partial_rotary_factor"].PositiveFloatOr(0.25, 1.0));
    LINEAGE_ASSIGN_OR_RETURN(partial, rope_src["partial_rotary_factor"].PositiveFloatOr(partial, 1.0));
    c.rope_dims = static_cast<int64_t>(static_cast<double>(c.head_dim) * partial);
    LINEAGE_ASSIGN_OR_RETURN(c.attn_output_gate, j["attn_output_gate"].BoolOr(true));
    c.zero_centred_norms = true;
    LINEAGE_RETURN_IF_ERROR(ReadLayerKinds(j, &c));
  } else if (c.latent()) {
    LINEAGE_RETURN_IF_ERROR(ReadLatentConfig(j, &c));
  } else {
    c.rope_dims = c.head_dim;
    c.layers = AttentionLayers(c.arch, c.num_layers);
  }
  LINEAGE_ASSIGN_OR_RETURN(c.bos_token_id, j["bos_token_id"].IntOr(-1, 0, L::kMaxTokenId));
  LINEAGE_RETURN_IF_ERROR(AddIds(j["eos_token_id"], &c.eos_token_ids));
  for (const KindConfig* k : KindConfigs())  // the kinds' own fields (model/layer_kinds.h)
    if (k->read_hf) LINEAGE_RETURN_IF_ERROR(k->read_hf(j, &c));
  RefineLayers(&c);
  LINEAGE_RETURN_IF_ERROR(ValidateConfig(c));
  return c;
}

Status MergeGenerationConfig(const Json& j, const std::string& path, ModelConfig* c) {
  const JsonField root(j, path);
  if (!root.is_object()) return root.Error("a JSON object");
  return AddIds(root["eos_token_id"], &c->eos_token_ids);
}

namespace {

// The kinds' own fields (model/layer_kinds.h) in text config t.
void AddKindFields(const ModelConfig& c, nlohmann::ordered_json& t) {
  for (const KindConfig* k : KindConfigs())
    if (k->write_hf) k->write_hf(c, t);
}

// config.json as the released Kimi-Linear-48B-A3B-Instruct writes it.
nlohmann::ordered_json MakeKimiConfig(const ModelConfig& c, const VocabData& vocab, DType dtype) {
  nlohmann::ordered_json t;
  t["architectures"] = {"KimiLinearForCausalLM"};
  if (vocab.bos_id >= 0) t["bos_token_id"] = vocab.bos_id;
  t["eos_token_id"] = vocab.eos_id;
  t["hidden_act"] = "silu";
  t["hidden_size"] = c.hidden;
  t["initializer_range"] = 0.02;
  t["intermediate_size"] = c.intermediate;
  std::vector<int64_t> kda, full;
  for (int64_t i = 0; i < c.num_layers; ++i)
    (c.recurrent(i) ? kda : full).push_back(i + 1);  // 1-indexed
  t["linear_attn_config"] = {{"full_attn_layers", full}, {"kda_layers", kda}};
  t["model_max_length"] = c.context_length;
  t["model_type"] = "kimi_linear";
  t["num_attention_heads"] = c.num_heads;
  t["num_hidden_layers"] = c.num_layers;
  t["num_key_value_heads"] = c.num_heads;
  t["num_nextn_predict_layers"] = c.mtp_layers;
  t["pad_token_id"] = vocab.pad_id >= 0 ? nlohmann::ordered_json(vocab.pad_id) : nlohmann::ordered_json(nullptr);
  t["rms_norm_eps"] = c.rms_eps;
  t["rope_theta"] = c.rope_theta;
  t["tie_word_embeddings"] = c.tied_embeddings;
  t["torch_dtype"] = TorchDType(dtype);
  t["use_cache"] = true;
  t["vocab_size"] = c.vocab;
  AddKindFields(c, t);
  return t;
}

// Kimi K3's config.json: the text model under text_config, which names
// itself Kimi Linear, with K3's own fields added (the fields llama.cpp's
// converter reads: spec latent-attention §3.3).
nlohmann::ordered_json MakeKimiK3Config(const ModelConfig& c, const VocabData& vocab, DType dtype) {
  nlohmann::ordered_json t = MakeKimiConfig(c, vocab, dtype);
  t["attn_res_block_size"] = c.attn_res_block;
  nlohmann::ordered_json root;
  root["architectures"] = {"KimiK3ForConditionalGeneration"};
  root["model_type"] = "kimi_k3";
  root["text_config"] = t;
  root["tie_word_embeddings"] = c.tied_embeddings;
  root["torch_dtype"] = TorchDType(dtype);
  return root;
}

// config.json of GLM-5 (glm_moe_dsa) and DeepSeek-V3.2 (deepseek_v32) as
// their checkpoints write it; kda_dsa, the design's hybrid, is Kimi Linear's
// config.json with the query LoRA and the indexer fields added.
nlohmann::ordered_json MakeSparseLatentConfig(const ModelConfig& c, const VocabData& vocab, DType dtype) {
  if (c.arch == Arch::kKdaDsa) {
    nlohmann::ordered_json t = MakeKimiConfig(c, vocab, dtype);
    t["architectures"] = {"KdaDsaForCausalLM"};
    t["model_type"] = "kda_dsa";
    return t;
  }
  const bool glm = c.arch == Arch::kGlmDsa;
  nlohmann::ordered_json t;
  t["architectures"] = {glm ? "GlmMoeDsaForCausalLM" : "DeepseekV32ForCausalLM"};
  t["attention_bias"] = false;
  if (vocab.bos_id >= 0) t["bos_token_id"] = vocab.bos_id;
  t["eos_token_id"] = vocab.eos_id;
  t["hidden_act"] = "silu";
  t["hidden_size"] = c.hidden;
  t["initializer_range"] = 0.02;
  t["intermediate_size"] = c.intermediate;
  t["max_position_embeddings"] = c.context_length;
  t["model_type"] = glm ? "glm_moe_dsa" : "deepseek_v32";
  t["num_attention_heads"] = c.num_heads;
  t["num_hidden_layers"] = c.num_layers;
  t["num_key_value_heads"] = c.num_heads;
  t["num_nextn_predict_layers"] = c.mtp_layers;
  t["rms_norm_eps"] = c.rms_eps;
  t["rope_theta"] = c.rope_theta;
  t["tie_word_embeddings"] = c.tied_embeddings;
  t["torch_dtype"] = TorchDType(dtype);
  t["use_cache"] = true;
  t["vocab_size"] = c.vocab;
  AddKindFields(c, t);
  return t;
}

}  // namespace

nlohmann::ordered_json MakeHfConfig(const ModelSpec& spec, const VocabData& vocab, DType dtype) {
  const ModelConfig& c = spec.config;
  if (c.arch == Arch::kKimiLinear) return MakeKimiConfig(c, vocab, dtype);
  if (c.arch == Arch::kKimiK3) return MakeKimiK3Config(c, vocab, dtype);
  if (c.latent()) return MakeSparseLatentConfig(c, vocab, dtype);
  const bool hybrid = IsHybrid(c.arch), next = c.arch == Arch::kQwen3Next;
  nlohmann::ordered_json t;
  if (c.arch == Arch::kQwen3) t["architectures"] = {"Qwen3ForCausalLM"};
  if (next) t["architectures"] = {"Qwen3NextForCausalLM"};
  t["attention_bias"] = false;
  t["attention_dropout"] = 0.0;
  if (hybrid && !next) t["attn_output_gate"] = c.attn_output_gate;
  if (vocab.bos_id >= 0) t["bos_token_id"] = vocab.bos_id;
  t["eos_token_id"] = vocab.eos_id;
  if (hybrid) t["full_attention_interval"] = 4;
  t["head_dim"] = c.head_dim;
  t["hidden_act"] = "silu";
  t["hidden_size"] = c.hidden;
  t["initializer_range"] = 0.02;
  if (c.intermediate > 0) t["intermediate_size"] = c.intermediate;
  if (hybrid) {
    std::vector<std::string> types;
    for (int64_t l = 0; l < c.num_layers; ++l) types.push_back(c.recurrent(l) ? "linear_attention" : "full_attention");
    t["layer_types"] = types;
  }
  t["max_position_embeddings"] = c.context_length;
  const char* model_type = c.arch == Arch::kQwen3_5 ? "qwen3_5_text" : c.arch == Arch::kQwen3_5Moe ? "qwen3_5_moe_text"
                           : next ? "qwen3_next" : "qwen3";
  t["model_type"] = model_type;
  if (hybrid) t["mtp_num_hidden_layers"] = c.mtp_layers;
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
  t["tie_word_embeddings"] = c.tied_embeddings;
  t["torch_dtype"] = TorchDType(dtype);
  t["use_cache"] = true;
  if (c.arch == Arch::kQwen3) t["use_sliding_window"] = false;
  t["vocab_size"] = c.vocab;
  AddKindFields(c, t);
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
