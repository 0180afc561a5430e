// MXFP4 weights of a Hugging Face compressed-tensors checkpoint
// (quantization_config: quant_method "compressed-tensors", format
// "mxfp4-pack-quantized"; Kimi K3's routed experts): a weight W is stored
// as W.weight_packed and W.weight_scale (docs/model-files.md, "MXFP4") and
// is read as one MXFP4 tensor in GGUF's block order, moved, not decoded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/json_field.h"
#include "model/safetensors_file.h"

namespace lineage::model {

// Whether config.json's quantization_config says MXFP4-packed weights;
// false when it has none. Unsupported, naming the field, for any other
// quantization (the weights would not be plain floats).
Result<bool> ReadMxfp4Quantization(const JsonField& config);

// The names W.weight_packed and W.weight_scale of the weight named W.weight;
// empty when `weight_name` does not end in ".weight".
struct Mxfp4Names {
  std::string packed, scale;
};
Mxfp4Names Mxfp4NamesFor(const std::string& weight_name);

// The [rows, cols] MXFP4 blocks of a packed weight: packed U8 [rows, cols/2]
// (element 2i in the low nibble), scale U8 [rows, cols/32]. Errors name the
// tensor and what is wrong (dtype, shape).
Result<std::vector<uint8_t>> RepackMxfp4(const std::string& name, const RawTensor& packed, const RawTensor& scale);

// The inverse, one row: `blocks` (cols / 32 MXFP4 blocks) as cols / 2 code
// bytes at `codes` and cols / 32 scale bytes at `scales`.
void UnpackMxfp4Row(const uint8_t* blocks, int64_t cols, uint8_t* codes, uint8_t* scales);

}  // namespace lineage::model
