// config.json <-> ModelConfig for Hugging Face checkpoints.
//
// Reading accepts the flat form (Qwen3ForCausalLM, Qwen3_5ForCausalLM,
// Qwen3NextForCausalLM) and Qwen3.5's nested form
// (Qwen3_5ForConditionalGeneration, Qwen3_5MoeForConditionalGeneration with
// text_config; the top-level tie_word_embeddings wins). MoE models read
// num_experts, num_experts_per_tok, moe_intermediate_size and
// shared_expert_intermediate_size. layer_types, else
// full_attention_interval (default 4); rope_parameters, else top-level
// rope_theta / partial_rotary_factor. Every field is read through JsonField:
// a missing, mistyped or out-of-range one (ConfigLimits) is an error naming
// the file, the field, what it holds and what was expected.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/dtype.h"
#include "core/status.h"
#include "model/config.h"
#include "model/json_field.h"
#include "model/shapes.h"
#include "model/vocab_data.h"

namespace lineage::model {

// Parses config.json (`path` is used in error messages only). The result has
// format kSafetensors, grouped V heads, and zero-centred norms for qwen3_5.
Result<ModelConfig> ParseHfConfig(const nlohmann::json& j, const std::string& path);

// Adds the ids of generation_config.json's eos_token_id (int or list) to c;
// an error names `path` and the field when the file is malformed.
Status MergeGenerationConfig(const nlohmann::json& j, const std::string& path, ModelConfig* c);

// `types`, an array of `num_layers` strings each `a` or `b` (`what` names
// them in errors): (*is_a)[l] says which.
Status ReadLayerChoices(const JsonField& types, int64_t num_layers, const std::string& what, const std::string& a,
                        const std::string& b, std::vector<bool>* is_a);

// config.json and generation_config.json as the real checkpoints write them.
nlohmann::ordered_json MakeHfConfig(const ModelSpec& spec, const VocabData& vocab, DType dtype);
nlohmann::ordered_json MakeGenerationConfig(const VocabData& vocab);

}  // namespace lineage::model
