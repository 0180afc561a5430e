#include "core/int_panel.h"

#include <immintrin.h>

#include <cstring>

#include "core/lane_order.h"
#include "core/quant_unpack.h"

namespace lineage::kernels {
namespace {

using quant::unpack_detail::Transpose8x8;

// What packing a 32-element block ends with, shared by both packers:
// -128 * the sum of codes of rows k0..k0+7 (the kernels' unsigned
// activations' offset; sums[h] of each half, added unless `halves`), and
// each row's scale and bias of block b (sub-block s, or 2 s + h in halves).
void StoreZeros(PackedIntPanel* p, int64_t b, int64_t k0, int64_t panel_rows, const __m256i sums[2]) {
  for (int h = 0; h < (p->halves ? 2 : 1); ++h) {
    const __m256i codes = p->halves ? sums[h] : _mm256_add_epi32(sums[0], sums[1]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p->zero.data() + (b * 2 + h) * panel_rows + k0),
                        _mm256_slli_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), codes), 7));
  }
}

void StoreScales(PackedIntPanel* p, int64_t b, int64_t s, const quant::Unpacked* u, int64_t nr, int64_t panel_rows) {
  for (int64_t k = 0; k < nr; ++k)
    for (int h = 0; h < (p->halves ? 2 : 1); ++h) {
      const int64_t at = (b * 2 + h) * panel_rows + k;
      p->scale[at] = u[k].scale[p->halves ? 2 * s + h : s];
      if (p->has_bias) p->bias[at] = u[k].bias[p->halves ? 2 * s + h : s];
    }
}

// A lane-order type's panel (core/lane_order.h): its blocks unpacked as
// the file type, so the codes come in the lane order's word order, and
// each transposed word vector stored where its elements belong (the
// order's word map) instead of moving the codes back first; each
// destination's code sums gathered as they arrive. The layout is the file
// type's (sub-blocks of 16 or 32; fields set by the caller).
template <DType t>
void PackLaneOrder(const TensorView& W, int64_t r0, int64_t nr, int64_t panel_rows, PackedIntPanel* p) {
  constexpr DType kFile = quant::FileTypeOf(t);
  const int64_t block_bytes = Info(t).block_bytes, super_blocks = W.cols() / 256;
  const quant::LaneWords& words = quant::WordsOf(t);
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  quant::Unpacked u[16] = {};
  for (int64_t B = 0; B < super_blocks; ++B) {
    for (int64_t k = 0; k < nr; ++k) quant::UnpackBlock<kFile>(W.row_ptr(r0 + k) + B * block_bytes, &u[k]);
    for (int64_t k0 = 0; k0 < panel_rows; k0 += 8) {
      __m256i sum[8][2] = {};  // per 32-element block of the super-block, per half
      for (int s = 0; s < 8; ++s) {
        __m256i r[8];
        for (int i = 0; i < 8; ++i) r[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(u[k0 + i].q + 32 * s));
        Transpose8x8(r);
        for (int g = 0; g < 8; ++g) {
          const int word = words.element_word[8 * s + g];  // 0..63
          const int64_t b = B * 8 + word / 8;
          uint8_t* dst = p->q.data() + b * 32 * panel_rows + (word % 8 * panel_rows + k0) * 4;
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), r[g]);
          __m256i& acc = sum[word / 8][word % 8 / 4];
          acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, r[g]), ones16));
        }
      }
      for (int j = 0; j < 8; ++j) StoreZeros(p, B * 8 + j, k0, panel_rows, sum[j]);
    }
    for (int j = 0; j < 8; ++j) StoreScales(p, B * 8 + j, j, u, nr, panel_rows);
  }
}

// The panel is built block by block across its rows: each row's block is
// unpacked once, then the 8 groups of 4 codes of 8 rows at a time are one
// 8 x 8 dword transpose, stored as whole vectors, and the rows' code sums
// come from the transposed vectors (vpmaddubsw by ones, vpmaddwd by ones).
// Element by element (a 4-byte store per group and row, a scalar sum) the
// pack took about a tenth of a 512-token prefill's matrix products and half
// of a 128-token one's.
template <DType t>
void PackIntPanelOf(const TensorView& W, int64_t r0, int64_t nr, int64_t panel_rows, PackedIntPanel* p) {
  const int64_t num_blocks = W.cols() / 32, per_block = Info(t).block_elements / 32;
  const int64_t block_bytes = Info(t).block_bytes;
  p->q.resize(static_cast<size_t>(num_blocks * 32 * panel_rows));
  p->scale.assign(static_cast<size_t>(num_blocks * 2 * panel_rows), 0.0f);
  p->bias.assign(static_cast<size_t>(num_blocks * 2 * panel_rows), 0.0f);
  p->zero.assign(static_cast<size_t>(num_blocks * 2 * panel_rows), 0);
  // Rows past nr stay zero: codes 0, scale 0, bias 0.
  quant::Unpacked u[16] = {};
  // The type's layout: one block unpacked says it for every block.
  quant::UnpackBlock<t>(W.row_ptr(r0), &u[0]);
  p->halves = u[0].sub == 16;
  p->has_bias = u[0].has_bias;
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  if constexpr (quant::IsLaneOrder(t)) return PackLaneOrder<t>(W, r0, nr, panel_rows, p);
  for (int64_t B = 0; B < num_blocks / per_block; ++B) {
    for (int64_t k = 0; k < nr; ++k) quant::UnpackBlock<t>(W.row_ptr(r0 + k) + B * block_bytes, &u[k]);
    for (int64_t s = 0; s < per_block; ++s) {
      const int64_t b = B * per_block + s;
      uint8_t* dst = p->q.data() + b * 32 * panel_rows;
      for (int64_t k0 = 0; k0 < panel_rows; k0 += 8) {
        __m256i r[8];
        for (int i = 0; i < 8; ++i) r[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(u[k0 + i].q + 32 * s));
        Transpose8x8(r);
        __m256i sum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        for (int g = 0; g < 8; ++g) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (g * panel_rows + k0) * 4), r[g]);
          sum[g / 4] = _mm256_add_epi32(sum[g / 4], _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, r[g]), ones16));
        }
        StoreZeros(p, b, k0, panel_rows, sum);
      }
      StoreScales(p, b, s, u, nr, panel_rows);
    }
  }
}

}  // namespace

void PackIntPanel(const TensorView& W, int64_t r0, int64_t nr, int64_t panel_rows, PackedIntPanel* p) {
  switch (W.dtype) {
#define LINEAGE_PACK_CASE(T) \
  case DType::T: return PackIntPanelOf<DType::T>(W, r0, nr, panel_rows, p);
    LINEAGE_PACK_CASE(kQ8_0)
    LINEAGE_PACK_CASE(kQ4_0)
    LINEAGE_PACK_CASE(kQ4_1)
    LINEAGE_PACK_CASE(kQ5_0)
    LINEAGE_PACK_CASE(kQ5_1)
    LINEAGE_PACK_CASE(kIQ4_NL)
    LINEAGE_PACK_CASE(kMXFP4)
    LINEAGE_PACK_CASE(kQ4_K)
    LINEAGE_PACK_CASE(kQ5_K)
    LINEAGE_PACK_CASE(kIQ4_XS)
    LINEAGE_PACK_CASE(kQ2_K)
    LINEAGE_PACK_CASE(kQ3_K)
    LINEAGE_PACK_CASE(kQ6_K)
    LINEAGE_PACK_CASE(kQ4_K_LANES)
    LINEAGE_PACK_CASE(kQ6_K_LANES)
#undef LINEAGE_PACK_CASE
    default: return;
  }
}

}  // namespace lineage::kernels
