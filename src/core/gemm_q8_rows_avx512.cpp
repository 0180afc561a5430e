// Q8_0 row kernel (few tokens) with AVX-512 VNNI.
//
// vpdpbusd multiplies unsigned by signed bytes, so it gets w + 128 (one xor
// per weight byte, shared by every token) and x, and 128 * sum(x) of each
// block, prepared with the activations (QuantizedActivations::sum128), is
// taken off the block's sum: two instructions per 64 weights and token
// instead of the four of |w| and x carrying w's sign (GGML's trick). No
// int32 sum can overflow: 32 * 255 * 127 per block. One 512-bit vector
// holds two blocks. Each block's
// integer dot product then needs its own scale d_w * d_x. Scaling every
// block pair separately (two fp16 conversions, broadcasts, an insert) cost
// more than the dot product itself, so the kernel takes 16 blocks at a time:
// 8 pair vectors are reduced to one vector of 16 block sums (21 shuffles and
// adds), the 16 fp16 scales are picked by four word permutes (vpermt2w over
// the group's first 512 bytes: cheaper than a vpgatherdd), and a single
// FMA applies them. The reduction leaves the blocks in the order
// kQ8GroupOrder, in which the activations keep their block sums and scales
// (QuantizedActivations).
// A row is taken against up to 4 tokens at once, sharing the weights'
// magnitudes and signs (batched decode: 60 instead of 42 GFLOP/s at T = 4).
// The row four rows ahead is prefetched while this one is read (see
// gemm_rows.inc); rows are summed 16 at a time (HSumEach).
#include <algorithm>
#include <cstring>

#include "core/gemm_internal.h"
#include "core/simd_avx512.h"

namespace lineage::kernels::avx512 {
namespace {

constexpr int kBlockBytes = 34;

// Blocks 2j and 2j+1 at `blk` against 64 activation bytes: 16 int32 partial
// sums, lanes 0-7 for block 2j and 8-15 for block 2j+1.
LINEAGE_AVX512 inline __m512i PairDot(const uint8_t* blk, __m512i xv) {
  const __m512i w = _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2))),
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kBlockBytes + 2)), 1);
  const __m512i sx = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(w), _mm512_setzero_si512(), xv);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), sx);
}

// Eight PairDot results (blocks 0..15) to one vector of block sums, block
// kQ8GroupOrder[l] in lane l.
LINEAGE_AVX512 inline __m512i ReduceBlocks16(const __m512i* d) {
  __m512i s[4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j)
    s[j] = _mm512_add_epi32(_mm512_unpacklo_epi32(d[2 * j], d[2 * j + 1]),
                            _mm512_unpackhi_epi32(d[2 * j], d[2 * j + 1]));
  const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi64(s[0], s[1]), _mm512_unpackhi_epi64(s[0], s[1]));
  const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi64(s[2], s[3]), _mm512_unpackhi_epi64(s[2], s[3]));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(t0, t1, 0x88), _mm512_shuffle_i32x4(t0, t1, 0xDD));
}

// The 16 fp16 block scales of blocks [0, 16) at `blk`, in kQ8GroupOrder.
// Block k's scale is word 17 k of the group: four 128-byte windows of 4
// scales each, picked by one two-register word permute per window.
struct ScaleIndex {
  __m512i idx[4];
  __mmask32 mask[4];
};
LINEAGE_AVX512 inline ScaleIndex MakeScaleIndex() {
  ScaleIndex si;
  for (int m = 0; m < 4; ++m) {
    alignas(64) int16_t idx[32] = {};
    uint32_t mask = 0;
    for (int l = 0; l < 16; ++l)
      if (kQ8GroupOrder[l] / 4 == m) idx[l] = static_cast<int16_t>(17 * kQ8GroupOrder[l] - 64 * m), mask |= 1u << l;
    si.idx[m] = _mm512_load_si512(idx);
    si.mask[m] = mask;
  }
  return si;
}
LINEAGE_AVX512 inline __m512 GatherScales(const uint8_t* blk, const ScaleIndex& si) {
  __m512i w = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m)
    w = _mm512_mask_mov_epi16(w, si.mask[m], _mm512_permutex2var_epi16(_mm512_loadu_si512(blk + 128 * m), si.idx[m],
                                           _mm512_loadu_si512(blk + 128 * m + 64)));
  return _mm512_cvtph_ps(_mm512_castsi512_si256(w));
}

// Sum over blocks [b0, num_blocks) of one row, a pair or a single block at a time.
LINEAGE_AVX512 float RowTail(const uint8_t* row, const int8_t* xq, const float* xd, int64_t b0,
                             int64_t num_blocks) {
  float sum = 0;
  for (int64_t b = b0; b < num_blocks; ++b) {
    const uint8_t* blk = row + b * kBlockBytes;
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32));
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    const __m256i dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(w), _mm256_sign_epi8(xv, w));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(dot), _mm256_extracti128_si256(dot, 1));
    s = _mm_hadd_epi32(s, s);
    s = _mm_hadd_epi32(s, s);
    uint16_t h;
    std::memcpy(&h, blk, 2);
    sum += static_cast<float>(_mm_cvtsi128_si32(s)) * _cvtsh_ss(h) * xd[b];
  }
  return sum;
}


// Rows [0, nr) at `rows` (row_bytes apart, nr <= 16) against tokens
// [t0, t0 + TB) of qx: the weights' magnitudes and signs are taken once per
// block pair and applied to every token; each row's products stay in a
// vector until the group's end, where one HSumEach per token sums all the
// rows' (as the super-block kernels: gemm_kquant_rows.inc).
template <int TB>
LINEAGE_AVX512 void RowGroupTokens(const uint8_t* rows, int64_t row_bytes, int64_t nr, int64_t groups,
                                   int64_t num_blocks, int64_t prefetch_ahead, const QuantizedActivations& qx,
                                   int64_t t0, float* Y, int64_t ldy) {
  const ScaleIndex scale_index = MakeScaleIndex();
  __m512 row_sums[TB][simd512::kLanes];
  for (int64_t k = 0; k < nr; ++k) {
    const uint8_t* row = rows + k * row_bytes;
    __m512 acc[TB];
#pragma GCC unroll 8
    for (int t = 0; t < TB; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* blk = row + g * 16 * kBlockBytes;
      PrimePageAhead(blk, 16 * kBlockBytes);
      PrefetchLinesToL2(blk + prefetch_ahead, 16 * kBlockBytes);
      __m512i biased_w[8];  // w + 128 as unsigned bytes
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const uint8_t* pair = blk + 2 * j * kBlockBytes;
        const __m512i w = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair + 2))),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair + kBlockBytes + 2)), 1);
        biased_w[j] = _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80)));
      }
      const __m512 ws = GatherScales(blk, scale_index);
#pragma GCC unroll 8
      for (int t = 0; t < TB; ++t) {
        const int8_t* xq = qx.row(t0 + t) + g * 512;
        __m512i d[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j)
          d[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), biased_w[j], _mm512_loadu_si512(xq + j * 64));
        const __m512i bias = _mm512_loadu_si512(qx.row_sum128(t0 + t) + g * 16);
        const __m512 xs = _mm512_loadu_ps(qx.row_scale_grouped(t0 + t) + g * 16);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ReduceBlocks16(d), bias)), _mm512_mul_ps(ws, xs),
                                 acc[t]);
      }
    }
    for (int t = 0; t < TB; ++t) {
      row_sums[t][k] = acc[t];
      if (groups * 16 < num_blocks) {
        const float tail = RowTail(row, qx.row(t0 + t), qx.row_scale(t0 + t), groups * 16, num_blocks);
        row_sums[t][k] = _mm512_add_ps(acc[t], _mm512_zextps128_ps512(_mm_set_ss(tail)));
      }
    }
  }
  for (int t = 0; t < TB; ++t) simd512::StoreEachSum(row_sums[t], nr, Y + t * ldy);
}

// Tokens per pass (ForEachTokenPass); 8 + 8 + kRowTokens vectors live. The
// 0.8B head in Q8_0 (248320 x 1024, two threads): 5 tokens in 9.9 ms as
// one pass against 12.3 as 4 + 1.
constexpr int kRowTokens = 5;

}  // namespace

LINEAGE_AVX512 void GemmRowsQ8(const TensorView& W, int64_t row_begin, int64_t row_end,
                               const QuantizedActivations& qx, float* Y, int64_t ldy, int64_t T) {
  const int64_t num_blocks = W.cols() / 32, groups = num_blocks / 16;
  const int64_t row_bytes = num_blocks * kBlockBytes, ahead = RowPrefetchBytes(row_bytes);
  for (int64_t r = row_begin; r < row_end; r += simd512::kLanes) {
    const uint8_t* rows = W.row_ptr(r);
    const int64_t nr = std::min<int64_t>(simd512::kLanes, row_end - r);
    ForEachTokenPass<kRowTokens>(T, [&]<int TB>(int64_t t0, std::integral_constant<int, TB>) LINEAGE_AVX512 {
      RowGroupTokens<TB>(rows, row_bytes, nr, groups, num_blocks, ahead, qx, t0, Y + t0 * ldy + r, ldy);
    });
  }
}

}  // namespace lineage::kernels::avx512
