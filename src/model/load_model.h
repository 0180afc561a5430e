// LoadModel: opens a model from the two formats people have and binds its
// weights (weights.h) without copying them, except Q4_K and Q6_K matrices
// when LoadOptions::lane_order (the default on AVX-512): those are copied
// into lane order (core/lane_order.h), buffers the Model owns.
//
// `path` is either
//   - a Hugging Face directory: config.json (flat, or Qwen3.5's nested
//     text_config form), model.safetensors or shards listed in
//     model.safetensors.index.json, tensors F32/F16/BF16 under the
//     `model.language_model.` or `model.` prefix, and with a
//     compressed-tensors MXFP4 quantization_config its packed weights
//     (model/mxfp4_checkpoint.h), moved into MXFP4 blocks the Model owns; or
//   - a .gguf file (general.architecture qwen35, qwen3, qwen35moe or qwen3next; tensors
//     F32/F16/BF16/Q8_0; block_count includes nextn_predict_layers).
// Hyper-parameters come from the file, never from the shape table. Errors
// name the file, the tensor or key, and what is wrong.
//
// The returned Model keeps its mappings alive; it is immutable and may be
// shared between threads.
#pragma once

#include <memory>
#include <string>

#include "core/isa.h"
#include "core/status.h"
#include "model/gguf_file.h"
#include "model/weights.h"

namespace lineage::model {

struct LoadOptions {
  // Q4_K / Q6_K in lane order: their AVX-512 row kernels (decode, draft
  // verification) do less work per token. Off, every weight stays mapped.
  bool lane_order = kernels::ActiveIsa() == kernels::Isa::kAvx512;
};

Result<std::shared_ptr<const Model>> LoadModel(const std::string& path, const LoadOptions& options = {});

// Where a model's tokenizer lives, for the text module to read.
struct VocabSource {
  FileFormat format = FileFormat::kSafetensors;
  std::string tokenizer_json;          // HF: <dir>/tokenizer.json
  std::string tokenizer_config_json;   // HF: <dir>/tokenizer_config.json, empty when absent
  std::shared_ptr<const GgufFile> gguf;  // GGUF: the opened file (tokenizer.ggml.* keys)
};

// Finds the tokenizer of the model at `path` (same path forms as LoadModel).
// NotFound when a HF directory has no tokenizer.json.
Result<VocabSource> LoadVocabSource(const std::string& path);

}  // namespace lineage::model
