// GGUF metadata -> ModelConfig for the architectures llama.cpp calls
// "qwen35", "qwen3", "qwen35moe" and "qwen3next" (spec §5.2). Keys are
// read, never assumed; a missing or mistyped key is named in the error. The
// result has format kGguf, tiled V heads for qwen35 and qwen35moe (grouped
// for qwen3next), and no zero-centred norms (the converter folded them).
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "model/config.h"
#include "model/gguf_file.h"

namespace lineage::model {

Result<ModelConfig> ParseGgufConfig(const GgufFile& g);

// An integer key in [min, max]; `fallback` when absent (NotFound naming the
// key without one); out-of-range values are named as read.
Result<int64_t> ReadIntKey(const GgufFile& g, const std::string& key, int64_t min, int64_t max,
                           std::optional<int64_t> fallback = std::nullopt);

// A float key, finite and in (0, max]; `fallback` when absent. GGUF stores
// rope.freq_base, the norm epsilon and the like as f32 while config.json
// holds the decimal the model was trained with (1e-6, not 9.99999997e-07):
// the shortest decimal that round-trips the f32 recovers it, so both
// formats of one model compute with the same constants.
Result<double> ReadPositiveDecimal(const GgufFile& g, const std::string& key, double fallback, double max);

}  // namespace lineage::model
