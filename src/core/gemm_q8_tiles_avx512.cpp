// Q8_0 x int8-activation tile kernel with AVX-512 VNNI (vpdpbusd).
//
// A panel of 16 weight rows is repacked per 32-element block as
// [8 groups of 4][16 rows][4 bytes], so one 512-bit load holds 4 weights of
// each of the 16 rows and one vpdpbusd against a broadcast 4-byte group of a
// token's activations adds 4 products into each row's lane. Activations are
// unsigned (q + 128); the extra 128 * sum(w) per block and row is subtracted
// by starting each block's integer accumulator at -128 * sum(w). After 8
// vpdpbusd a lane holds the block's exact integer dot product, which is
// scaled by d_w (per row) * d_x (per token) into fp32 accumulators.
// Per block and token: 8 vpdpbusd + 3 float ops for 512 multiply-adds,
// against 32 FMAs on the fp32 path.
#include <cstring>
#include <vector>

#include "core/gemm_internal.h"
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
namespace {

constexpr int64_t kRows = kQ8TileRows, kTokens = kQ8TileTokens;

struct PackedQ8Panel {
  std::vector<uint8_t> q;     // [block][group][row][4]
  std::vector<float> scale;   // [block][row]
  std::vector<int32_t> bias;  // [block][row]: -128 * sum of the row's block
};

LINEAGE_AVX512 void PackQ8Panel(const TensorView& W, int64_t r0, int64_t nr, PackedQ8Panel* p) {
  const int64_t num_blocks = W.cols() / 32;
  p->q.assign(static_cast<size_t>(num_blocks * 32 * kRows), 0);
  p->scale.assign(static_cast<size_t>(num_blocks * kRows), 0.0f);
  p->bias.assign(static_cast<size_t>(num_blocks * kRows), 0);
  for (int64_t k = 0; k < nr; ++k) {
    const uint8_t* row = W.row_ptr(r0 + k);
    for (int64_t b = 0; b < num_blocks; ++b) {
      const uint8_t* blk = row + b * 34;
      uint16_t h;
      std::memcpy(&h, blk, 2);
      p->scale[b * kRows + k] = _cvtsh_ss(h);
      int32_t sum = 0;
      for (int i = 0; i < 32; ++i) sum += static_cast<int8_t>(blk[2 + i]);
      p->bias[b * kRows + k] = -128 * sum;
      uint8_t* dst = p->q.data() + b * 32 * kRows + k * 4;
      for (int g = 0; g < 8; ++g) std::memcpy(dst + g * kRows * 4, blk + 2 + g * 4, 4);
    }
  }
}

LINEAGE_AVX512 void Q8TileKernel(const PackedQ8Panel& p, int64_t num_blocks, const uint8_t* xq,
                                 const float* xs, float* Y, int64_t ldy, int64_t nr, int64_t nt) {
  __m512 acc[kTokens];
#pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* wb = p.q.data() + b * 32 * kRows;
    const uint8_t* xb = xq + b * 32 * kTokens;
    const __m512i bias = _mm512_loadu_si512(p.bias.data() + b * kRows);
    __m512i dot[kTokens];
#pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t) dot[t] = bias;
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m512i w = _mm512_loadu_si512(wb + g * kRows * 4);
#pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t) {
        int32_t x4;
        std::memcpy(&x4, xb + (g * kTokens + t) * 4, 4);
        dot[t] = _mm512_dpbusd_epi32(dot[t], _mm512_set1_epi32(x4), w);
      }
    }
    const __m512 dw = _mm512_loadu_ps(p.scale.data() + b * kRows);
    const float* xsb = xs + b * kTokens;
#pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t)
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), dw), _mm512_set1_ps(xsb[t]), acc[t]);
  }
  const __mmask16 mask = nr >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << nr) - 1);
  for (int64_t t = 0; t < nt; ++t) _mm512_mask_storeu_ps(Y + t * ldy, mask, acc[t]);
}

}  // namespace

LINEAGE_AVX512 void GemmTilesQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                                const PackedQ8Activations& px, float* Y, int64_t ldy) {
  thread_local PackedQ8Panel panel;
  const int64_t num_tiles = (px.num_tokens + kTokens - 1) / kTokens;
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kRows) {
    const int64_t nr = row_end - r0 < kRows ? row_end - r0 : kRows;
    PackQ8Panel(W, r0, nr, &panel);
    for (int64_t j = 0; j < num_tiles; ++j) {
      const int64_t t0 = j * kTokens;
      const int64_t nt = px.num_tokens - t0 < kTokens ? px.num_tokens - t0 : kTokens;
      Q8TileKernel(panel, px.num_blocks, px.tile(j), px.tile_scale(j), Y + t0 * ldy + r0, ldy, nr, nt);
    }
  }
}

}  // namespace lineage::kernels::avx512
