// A panel of weight rows repacked for the integer tile kernels
// (gemm_int_tiles.inc): every block type is unpacked (quant_unpack.h) to
// int8 codes with one scale and bias per 32 elements (or per 16: Q2_K,
// Q3_K, Q6_K), w_i = q_i * scale + bias, and stored per 32-element block as
// [8 groups of 4][panel rows][4 bytes], so that one vector load holds 4
// codes of each row of the panel (16 rows in a 512-bit register, 8 in a
// 256-bit one).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor_view.h"

namespace lineage::kernels {

struct PackedIntPanel {
  std::vector<uint8_t> q;  // [block][group][row][4]
  // [block][half][row]. Halves: a scale per 16 elements (Q2_K, Q3_K, Q6_K),
  // each half's -128 * sum of codes beside it; otherwise half 0 holds the
  // block's scale and whole sum. The -128 * sum starts a block's integer
  // accumulator: the kernels multiply codes by unsigned activations
  // (x_q + 128).
  std::vector<float> scale;
  std::vector<int32_t> zero;
  std::vector<float> bias;  // [block][half][row]: w = q * scale + bias (types with a bias)
  bool halves = false;      // as the unpacked blocks say (quant::Unpacked)
  bool has_bias = false;
};

// Rows [r0, r0 + nr) of W (nr <= panel_rows, panel_rows 8 or 16) into p,
// laid out for panel_rows rows (the rows past nr are zero). W is a
// quantized type.
void PackIntPanel(const TensorView& W, int64_t r0, int64_t nr, int64_t panel_rows, PackedIntPanel* p);

}  // namespace lineage::kernels
