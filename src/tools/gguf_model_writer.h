// The GGUF half of WriteModel (write_model.h): metadata and tensors as
// llama.cpp's converter (convert_hf_to_gguf.py, conversion/qwen.py) writes
// them for a Qwen3.5 (arch "qwen35") or Qwen3 (arch "qwen3") checkpoint.
//
// Tensor types follow the converter: 1-D tensors, *_norm.weight,
// ssm_conv1d and non-".weight" tensors (ssm_a, ssm_dt.bias) are F32; every
// other matrix takes the requested type (Q8_0 falls back to F16 when a row
// is not a multiple of 32).
#pragma once

#include <string>

#include "core/status.h"
#include "model/shapes.h"
#include "model/tensor_plan.h"
#include "model/vocab_data.h"
#include "tools/write_model.h"

namespace lineage::model {

// The ggml type the converter gives `p` when asked for `dtype`.
DType GgufTensorDType(const PlannedTensor& p, DType dtype);

Status WriteGgufModel(const ModelSpec& spec, const VocabData& vocab, const WriteOptions& options,
                      const std::string& path);

}  // namespace lineage::model
