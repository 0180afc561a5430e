// WriteModel: writes a random-weight model of a ModelSpec to disk in the
// exact layout of a real checkpoint (docs/model-files.md):
//   - safetensors: a Hugging Face directory (config.json, generation_config.json,
//     tokenizer.json, tokenizer_config.json with the chat template, and
//     model.safetensors or shards + model.safetensors.index.json);
//   - gguf: one file as llama.cpp's converter writes it from that directory
//     (names, ggml shapes, metadata keys, and its transforms: -exp(A_log),
//     +1 on zero-centred norms, squeezed conv, V heads grouped -> tiled).
// Weights are a pure function of (spec, seed): both formats hold the same
// model, and MakeRandomModel gives it in memory. Tensors are produced and
// written one row at a time, so memory stays small whatever the shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"
#include "core/status.h"
#include "model/config.h"
#include "tools/quant_mix.h"
#include "model/shapes.h"
#include "model/vocab_data.h"

namespace lineage::model {

struct WriteOptions {
  FileFormat format = FileFormat::kSafetensors;
  DType dtype = DType::kBF16;     // f32, f16, bf16; q8_0 for gguf only
  // gguf only: llama.cpp's per-tensor mix of a quantization preset
  // (tools/quant_mix.h); when set it decides every tensor's type, not `dtype`.
  std::optional<QuantPreset> preset;
  uint64_t seed = 0;
  uint64_t shard_bytes = 0;       // safetensors: > 0 splits into shards of at most this much data
};

// `out_path` is the directory (safetensors; created if absent) or the .gguf
// file. `vocab` must have spec.config.vocab tokens; its chat_template is
// written as is.
Status WriteModel(const ModelSpec& spec, const VocabData& vocab, const WriteOptions& options,
                  const std::string& out_path);

}  // namespace lineage::model
