// Scalar reference dequantization of GGML block formats: the specification
// every fast decoder and quantized kernel is tested against.
//
// Follows docs/model-files.md ("Block types") element by element: each value
// is the float expression written there, evaluated in the same order, so the
// result equals ggml's dequantization bit for bit (tested on files written by
// llama.cpp). Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lineage::quant {

// Decodes `num_blocks` consecutive blocks of `t` (any DType; plain types
// count one element per block) starting at `src` into out[num_blocks *
// Info(t).block_elements]. src needs only 2-byte alignment.
void DequantizeBlocks(DType t, const uint8_t* src, int64_t num_blocks, float* out);

}  // namespace lineage::quant
