// Block quantizers: fp32 rows to GGML block bytes, for `lineage mkmodel`.
//
// Our own simple quantizers (one pass, round to nearest; no search over
// scales and no importance matrix, so their error is somewhat above
// llama-quantize's), writing exactly the layouts of docs/model-files.md
// ("Block types") so that any GGUF reader decodes them. Encodable: Q4_0,
// Q5_0, Q5_1, IQ4_NL, Q4_K, Q5_K, Q6_K, IQ4_XS, MXFP4 (with Q8_0, which EncodeRow
// has always written, the types of llama.cpp's Q4_0, Q4_K_M, Q5_K_M, Q6_K,
// Q8_0, IQ4_XS and MXFP4_MOE presets and their fallbacks). Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lineage::model {

bool CanQuantize(DType t);

// Quantizes n values (a multiple of the block size) into RowBytes(t, n)
// bytes at out. REQUIRES: CanQuantize(t).
void QuantizeRow(DType t, const float* x, int64_t n, uint8_t* out);

}  // namespace lineage::model
