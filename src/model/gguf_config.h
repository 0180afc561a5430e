// GGUF metadata -> ModelConfig for the architectures llama.cpp calls
// "qwen35", "qwen3", "qwen35moe" and "qwen3next" (spec §5.2). Keys are
// read, never assumed; a missing or mistyped key is named in the error. The
// result has format kGguf, tiled V heads for qwen35 and qwen35moe (grouped
// for qwen3next), and no zero-centred norms (the converter folded them).
#pragma once

#include "core/status.h"
#include "model/config.h"
#include "model/gguf_file.h"

namespace lineage::model {

Result<ModelConfig> ParseGgufConfig(const GgufFile& g);

}  // namespace lineage::model
