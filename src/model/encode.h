// Row encoders: fp32 values to the stored bytes of a weight dtype, the
// inverse of DecodeToFloat (src/core/tensor_view.h). Used by the writers and
// the in-memory random model so that every path stores identical bytes.
//
// Q8_0 follows ggml's reference quantizer: per block of 32, d = amax / 127,
// q = round(x / d), the scale stored as fp16.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/tensor_view.h"

namespace lineage::model {

// Encodes n values (n a multiple of the dtype's block size) into `out`,
// which has RowBytes(dtype, n) bytes: F32, F16, BF16, Q8_0 and the block
// types of CanQuantize (model/quantize_blocks.h).
void EncodeRow(const float* in, int64_t n, DType dtype, uint8_t* out);

// Rounds values through `dtype` and back (what a reader will see).
void RoundTrip(float* values, int64_t n, DType dtype);

// The whole tensor decoded to fp32.
std::vector<float> DecodeAll(const TensorView& t);

// GGUF's ssm_a from HF's A_log, computed one way everywhere (spec §2.3).
float SsmAFromALog(float a_log);

}  // namespace lineage::model
