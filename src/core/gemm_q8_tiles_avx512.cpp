// Integer tile kernel with AVX-512 VNNI (vpdpbusd) for every block type
// (IntTileType): sub-blocks of 32 elements (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// IQ4_NL, Q4_K, Q5_K, IQ4_XS) or of 16 (Q3_K, Q6_K, and Q2_K with a bias
// per 16: each half of a 32-element block has its own scale, integer sum
// and bias), against int8 activations quantised per 32 elements.
//
// Each block is unpacked (quant_unpack.h) to int8 codes with one scale and
// bias per 32 elements: w_i = q_i * scale + bias. A panel of 16 weight rows
// is repacked per 32-element block as [8 groups of 4][16 rows][4 bytes], so
// one 512-bit load holds 4 codes of each of the 16 rows and one vpdpbusd
// against a broadcast 4-byte group of a token's activations adds 4 products
// into each row's lane. Activations are unsigned (x_q + 128); the extra
// 128 * sum(q) per block and row is subtracted by starting each block's
// integer accumulator at -128 * sum(q). After 8 vpdpbusd a lane holds the
// block's exact integer dot product sum q_i x_q,i, which is scaled by
// scale (per row) * d_x (per token) into fp32 accumulators; a type with a
// bias (Q4_1, Q5_1, Q4_K, Q5_K) adds bias * d_x * sum(x_q), the sum kept
// with the activations.
// Per block and token: 8 vpdpbusd + 3 (or 4) float ops for 512
// multiply-adds, against 32 FMAs on the fp32 path.
#include <cstring>
#include <vector>

#include "core/gemm_internal.h"
#include "core/quant_unpack.h"
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
namespace {

constexpr int64_t kRows = kQ8TileRows, kTokens = kQ8TileTokens;

struct PackedIntPanel {
  std::vector<uint8_t> q;     // [block][group][row][4]
  // [block][half][row]. Halves: a scale per 16 elements (Q3_K, Q6_K), each
  // half's -128 * sum of codes beside it; otherwise half 0 holds the
  // block's scale and whole sum.
  std::vector<float> scale;
  std::vector<int32_t> zero;
  std::vector<float> bias;    // [block][half][row]: w = q * scale + bias (types with a bias)
  bool halves = false;        // as the unpacked blocks say (quant::Unpacked)
  bool has_bias = false;
};

template <DType t>
LINEAGE_AVX512 void PackIntPanelOf(const TensorView& W, int64_t r0, int64_t nr, PackedIntPanel* p) {
  const int64_t num_blocks = W.cols() / 32, per_block = Info(t).block_elements / 32;
  const int64_t block_bytes = Info(t).block_bytes;
  p->q.assign(static_cast<size_t>(num_blocks * 32 * kRows), 0);
  p->scale.assign(static_cast<size_t>(num_blocks * 2 * kRows), 0.0f);
  p->bias.assign(static_cast<size_t>(num_blocks * 2 * kRows), 0.0f);
  p->zero.assign(static_cast<size_t>(num_blocks * 2 * kRows), 0);
  quant::Unpacked u;
  // The type's layout: one block unpacked says it for every block.
  quant::UnpackBlock<t>(W.row_ptr(r0), &u);
  p->halves = u.sub == 16;
  p->has_bias = u.has_bias;
  for (int64_t k = 0; k < nr; ++k) {
    const uint8_t* row = W.row_ptr(r0 + k);
    for (int64_t B = 0; B < num_blocks / per_block; ++B) {
      quant::UnpackBlock<t>(row + B * block_bytes, &u);
      for (int64_t s = 0; s < per_block; ++s) {
        const int64_t b = B * per_block + s;
        const int8_t* codes = u.q + 32 * s;
        for (int h = 0; h < (p->halves ? 2 : 1); ++h) {
          const int len = p->halves ? 16 : 32;
          p->scale[(b * 2 + h) * kRows + k] = u.scale[p->halves ? 2 * s + h : s];
          int32_t sum = 0;
          for (int i = 0; i < len; ++i) sum += codes[len * h + i];
          p->zero[(b * 2 + h) * kRows + k] = -128 * sum;
          if (p->has_bias) p->bias[(b * 2 + h) * kRows + k] = u.bias[p->halves ? 2 * s + h : s];
        }
        uint8_t* dst = p->q.data() + b * 32 * kRows + k * 4;
        for (int g = 0; g < 8; ++g) std::memcpy(dst + g * kRows * 4, codes + g * 4, 4);
      }
    }
  }
}

LINEAGE_AVX512 void PackIntPanel(const TensorView& W, int64_t r0, int64_t nr, PackedIntPanel* p) {
  switch (W.dtype) {
#define LINEAGE_PACK_CASE(T) \
  case DType::T: return PackIntPanelOf<DType::T>(W, r0, nr, p);
    LINEAGE_PACK_CASE(kQ8_0)
    LINEAGE_PACK_CASE(kQ4_0)
    LINEAGE_PACK_CASE(kQ4_1)
    LINEAGE_PACK_CASE(kQ5_0)
    LINEAGE_PACK_CASE(kQ5_1)
    LINEAGE_PACK_CASE(kIQ4_NL)
    LINEAGE_PACK_CASE(kQ4_K)
    LINEAGE_PACK_CASE(kQ5_K)
    LINEAGE_PACK_CASE(kIQ4_XS)
    LINEAGE_PACK_CASE(kQ2_K)
    LINEAGE_PACK_CASE(kQ3_K)
    LINEAGE_PACK_CASE(kQ6_K)
#undef LINEAGE_PACK_CASE
    default: return;
  }
}

// kHalves: the 32 elements carry one scale (false) or one per 16 (true:
// each half's integer sum is scaled on its own, and with kBias each half's
// bias meets that half's activation sum).
template <bool kBias, bool kHalves>
LINEAGE_AVX512 void IntTileKernel(const PackedIntPanel& p, int64_t num_blocks, const uint8_t* xq, const float* xs,
                                  const float* xsum, const float* xsum_lo, float* Y, int64_t ldy, int64_t nr,
                                  int64_t nt) {
  __m512 acc[kTokens];
#pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* wb = p.q.data() + b * 32 * kRows;
    const uint8_t* xb = xq + b * 32 * kTokens;
    const float* xsb = xs + b * kTokens;
    __m512i dot[kTokens];
    for (int h = 0; h < (kHalves ? 2 : 1); ++h) {
      const __m512i zero = _mm512_loadu_si512(p.zero.data() + (b * 2 + h) * kRows);
#pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t) dot[t] = zero;
      const int g0 = kHalves ? 4 * h : 0, g1 = kHalves ? 4 * h + 4 : 8;
#pragma GCC unroll 8
      for (int g = g0; g < g1; ++g) {
        const __m512i w = _mm512_loadu_si512(wb + g * kRows * 4);
#pragma GCC unroll 16
        for (int t = 0; t < kTokens; ++t) {
          int32_t x4;
          std::memcpy(&x4, xb + (g * kTokens + t) * 4, 4);
          dot[t] = _mm512_dpbusd_epi32(dot[t], _mm512_set1_epi32(x4), w);
        }
      }
      const __m512 dw = _mm512_loadu_ps(p.scale.data() + (b * 2 + h) * kRows);
#pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t)
        acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[t]), dw), _mm512_set1_ps(xsb[t]), acc[t]);
    }
    if constexpr (kBias && kHalves) {
      const __m512 b0 = _mm512_loadu_ps(p.bias.data() + (b * 2) * kRows);
      const __m512 b1 = _mm512_loadu_ps(p.bias.data() + (b * 2 + 1) * kRows);
      const float *sb = xsum + b * kTokens, *lo = xsum_lo + b * kTokens;
#pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t)
        acc[t] = _mm512_fmadd_ps(b1, _mm512_set1_ps(sb[t] - lo[t]), _mm512_fmadd_ps(b0, _mm512_set1_ps(lo[t]), acc[t]));
    } else if constexpr (kBias) {
      const __m512 bw = _mm512_loadu_ps(p.bias.data() + b * 2 * kRows);
      const float* sb = xsum + b * kTokens;
#pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_fmadd_ps(bw, _mm512_set1_ps(sb[t]), acc[t]);
    }
  }
  const __mmask16 mask = nr >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << nr) - 1);
  for (int64_t t = 0; t < nt; ++t) _mm512_mask_storeu_ps(Y + t * ldy, mask, acc[t]);
}

}  // namespace

bool IntTileType(DType t) { return IsQuantized(t); }

LINEAGE_AVX512 void GemmTilesQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                                const PackedQ8Activations& px, float* Y, int64_t ldy) {
  thread_local PackedIntPanel panel;
  const int64_t num_tiles = (px.num_tokens + kTokens - 1) / kTokens;
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kRows) {
    const int64_t nr = row_end - r0 < kRows ? row_end - r0 : kRows;
    PackIntPanel(W, r0, nr, &panel);
    for (int64_t j = 0; j < num_tiles; ++j) {
      const int64_t t0 = j * kTokens;
      const int64_t nt = px.num_tokens - t0 < kTokens ? px.num_tokens - t0 : kTokens;
      float* y = Y + t0 * ldy + r0;
      const uint8_t* xq = px.tile(j);
      const float *xs = px.tile_scale(j), *xsum = px.tile_sum(j), *xsum_lo = px.tile_sum_lo(j);
      if (panel.halves && panel.has_bias) {
        IntTileKernel<true, true>(panel, px.num_blocks, xq, xs, xsum, xsum_lo, y, ldy, nr, nt);
      } else if (panel.halves) {
        IntTileKernel<false, true>(panel, px.num_blocks, xq, xs, xsum, xsum_lo, y, ldy, nr, nt);
      } else if (panel.has_bias) {
        IntTileKernel<true, false>(panel, px.num_blocks, xq, xs, xsum, xsum_lo, y, ldy, nr, nt);
      } else {
        IntTileKernel<false, false>(panel, px.num_blocks, xq, xs, xsum, xsum_lo, y, ldy, nr, nt);
      }
    }
  }
}

}  // namespace lineage::kernels::avx512
