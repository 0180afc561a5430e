// Internal interface between gemm.cpp (dispatch, threading, activation
// preparation) and the per-ISA GEMM kernels. Not for use outside src/core.
//
// Two regimes (see gemm.cpp for the choice):
//  - rows: few tokens. Each weight row is streamed once and dotted with the
//    T activation rows kept in L1; memory-bound.
//  - tiles: many tokens. A panel of kTileRows weight rows is decoded to fp32
//    (or repacked for the bf16 / int8 dot instructions) once and multiplied
//    with register tiles of tokens; compute-bound.
#pragma once

#include <cstdint>
#include <vector>

#include "core/isa.h"
#include "core/tensor_view.h"

namespace lineage::kernels {

// Activations quantised like Q8_0 (block of 32, scale d = max|x| / 127,
// q = round(x / d)) for the integer dot-product paths. Scales stay fp32.
struct QuantizedActivations {
  int64_t num_tokens = 0, cols = 0;
  std::vector<int8_t> q;     // [num_tokens, cols]
  std::vector<float> scale;  // [num_tokens, cols / 32]
  std::vector<int32_t> sum;  // [num_tokens, cols / 32]: sum of q in the block
  const int8_t* row(int64_t t) const { return q.data() + t * cols; }
  const float* row_scale(int64_t t) const { return scale.data() + t * (cols / 32); }
};

void QuantizeActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, QuantizedActivations* out);

// Activations for the tile kernels: tokens grouped by `tile_tokens` and
// stored [tile][cols][tile_tokens] (zero-padded past T), so a kernel reads
// the tile's values of one input column contiguously.
struct PackedActivations {
  int64_t num_tokens = 0, cols = 0, tile_tokens = 0;
  std::vector<float> data;
  const float* tile(int64_t j) const { return data.data() + j * cols * tile_tokens; }
};

#define LINEAGE_DECLARE_GEMM_KERNELS(A)                                                        \
  /* Y[t, o] for o in [row_begin, row_end), t < T; qx is set for Q8_0. */                      \
  A void GemmRows(const TensorView& W, int64_t row_begin, int64_t row_end, const float* X,     \
                  int64_t ldx, const QuantizedActivations* qx, float* Y, int64_t ldy, int64_t T); \
  A int64_t TileTokens();                                                                       \
  A int64_t TileRows();                                                                         \
  /* Y for rows [row_begin, row_end) (a multiple of TileRows() apart, except at the end). */    \
  A void GemmTiles(const TensorView& W, int64_t row_begin, int64_t row_end,                    \
                   const PackedActivations& px, float* Y, int64_t ldy);

namespace avx2 {
LINEAGE_DECLARE_GEMM_KERNELS()
}
namespace avx512 {
LINEAGE_DECLARE_GEMM_KERNELS(LINEAGE_AVX512)
}
#undef LINEAGE_DECLARE_GEMM_KERNELS

}  // namespace lineage::kernels
