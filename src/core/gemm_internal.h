// Internal interface between gemm.cpp (dispatch, threading, activation
// preparation) and the per-ISA GEMM kernels. Not for use outside src/core.
//
// Two regimes (see gemm.cpp for the choice):
//  - rows: few tokens. Weight rows are streamed from memory once and dotted
//    with the activation rows (kept in L1); memory-bound. Q8_0, Q4_0, Q4_K,
//    Q5_K, Q6_K and IQ4_XS use integer dot products with int8-quantised
//    activations unless ExactQ8(); the other types are decoded to fp32.
//  - tiles: many tokens. A panel of weight rows is repacked once and
//    multiplied with register tiles of tokens; compute-bound. Block types
//    with an integer tile on this ISA (IntTileType: every one on AVX-512
//    and AVX-VNNI, all but Q8_0 / IQ4_NL / IQ4_XS on plain AVX2) are
//    repacked to int8 codes against int8 activations (16-bit for a matrix
//    marked TensorView::wide_activations) unless ExactQ8()
//    (gemm_int_tiles.inc); the rest are decoded to fp32.
#pragma once

#include <immintrin.h>

#include <bit>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/aligned_vector.h"
#include "core/isa.h"
#include "core/tensor_view.h"

namespace lineage::kernels {

// From this many tokens on, Gemm uses the tiled regime for `dtype`: repacking
// a weight panel (one pass over it) is repaid by reusing it across register
// tiles of tokens. Measured on one core with weights streamed from DRAM
// (4096 x 1024), rows vs tiles in GFLOP/s: BF16 73 vs 46 at T = 16, even at
// T = 24; Q8_0 74 vs 58 at T = 8, 70 vs 86 at T = 12 (the VNNI tiles reach
// 93 at T = 16, 280+ in cache at T = 96).
inline int64_t TileMinTokens(DType dtype) { return dtype == DType::kQ8_0 ? 12 : 24; }

// The row kernels take four weight rows at a time. Points rows[0..4) at rows
// r0.. of W, whose rows are `row_bytes` apart (repeating r0 past row_end, so
// a short group reads valid memory) and returns how many are real.
// (row_bytes is the caller's, computed once: W.row_ptr looks the dtype up
// each time, which showed in decode profiles.)
inline int64_t RowGroup(const TensorView& W, int64_t row_bytes, int64_t r0, int64_t row_end,
                        const uint8_t* rows[4]) {
  const int64_t nr = row_end - r0 < 4 ? row_end - r0 : 4;
  const auto* base = static_cast<const uint8_t*>(W.data);
  for (int k = 0; k < 4; ++k) rows[k] = base + (r0 + (k < nr ? k : 0)) * row_bytes;
  return nr;
}

// A row kernel that takes at most kMax tokens per pass over a group of
// rows (each pass unpacks the codes again, from L1) runs a call of T
// tokens as ceil(T / kMax) passes of equal size: 5 tokens (a step that
// verifies four drafts) as one pass of 5 where kMax allows, 7 as 4 + 3.
// fn(t0, std::integral_constant<int, n>{}) for each pass of n tokens from t0.
template <int kMax, class Fn>
inline void ForEachTokenPass(int64_t T, Fn&& fn) {
  const int64_t passes = (T + kMax - 1) / kMax, per_pass = (T + passes - 1) / passes;
  for (int64_t t0 = 0; t0 < T; t0 += per_pass) {
    const int64_t n = T - t0 < per_pass ? T - t0 : per_pass;
    [&]<int... k>(std::integer_sequence<int, k...>) {
      ((n == k + 1 ? (fn(t0, std::integral_constant<int, k + 1>{}), 0) : 0), ...);
    }(std::make_integer_sequence<int, kMax>{});
  }
}

// How far ahead of the byte being read the row kernels prefetch line by
// line (to L2, or L1 for short float rows: gemm_rows.inc): four rows.
// Distances of 8 and 16 KiB (instead of 2.3 KiB for Q4_K rows of 1024
// columns) changed nothing measurable from DRAM on two threads. The AVX-512
// super-block kernels prefetch a fixed 8 KiB ahead instead
// (LinePrefetchBytes in gemm_kquant_rows.inc); every row kernel primes
// pages (below).
inline int64_t RowPrefetchBytes(int64_t row_bytes) { return 4 * row_bytes; }

// One prefetch into L2 for each 64-byte line of [p, p + bytes): what the
// integer row kernels issue for the block `ahead` bytes past the one they
// read. Always inlined, so that a block's constant size unrolls the loop.
[[gnu::always_inline]] inline void PrefetchLinesToL2(const uint8_t* p, int64_t bytes) {
#pragma GCC unroll 16
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T1);
}

// One core here keeps more of its reads in flight when it reads several
// streams at once than when it reads one: on the Zen 3 VM this was
// measured on (two cores, AVX2), a plain read of 8 MiB per thread in 16 MiB
// bursts went 17.9 -> 21.5 GB/s on two threads and 10.8 -> 15.0 GB/s on
// one (median of 200, four streams interleaved 256 bytes apart against
// one). A decode row kernel (one token) therefore walks its range as
// `S` streams: the range of W (rows `row_bytes` apart at `base`, results
// at Y[row]) is cut into S equal runs of whole groups of `group_rows`
// rows, and fn(groups) is called for the S groups at the same place in
// each run, which the kernel reads block by block in turn. Returns the
// first row left for the one-stream loop (the rows past the last whole set
// of S groups). A row's result does not change: each row is summed as the
// one-stream kernel sums it.
template <int S>
struct InterleavedGroups {
  int64_t first_row[S];
  const uint8_t* rows[S];  // each group's first row
  float* y[S];             // where that row's result goes
};
template <int S, class Fn>
inline int64_t ForEachInterleavedGroup(const uint8_t* base, int64_t row_bytes, float* Y, int64_t row_begin,
                                       int64_t row_end, int64_t group_rows, Fn&& fn) {
  const int64_t run = (row_end - row_begin) / group_rows / S * group_rows;
  InterleavedGroups<S> groups;
  for (int64_t g = 0; g < run; g += group_rows) {
    for (int s = 0; s < S; ++s) {
      groups.first_row[s] = row_begin + s * run + g;
      groups.rows[s] = base + groups.first_row[s] * row_bytes, groups.y[s] = Y + groups.first_row[s];
    }
    fn(groups);
  }
  return row_begin + S * run;
}

// The hardware's stream prefetcher follows a stream within one 4 KiB page
// and learns every new page again from its first demand misses; a kernel
// that spends ~100 instructions per 300 bytes has few misses in flight, so
// every page began with a stall. A row kernel calls PrimePageAhead once per
// step of `step` bytes (< 4 KiB) of a stream it reads front to back, at p:
// when a page starts within those bytes moved kPagePrimeBytes ahead, one
// prefetch of the page's first line sets the prefetcher going there before
// the kernel arrives: one instruction per 4 KiB. Measured on the 0.8B
// decode (bench_decode_step --threads 2, the old and new binaries
// alternated six times, medians): the matrix products' time against a
// plain read of their bytes went 1.41 -> 1.07 (Q4_K_M), 1.34 -> 0.99
// (Q8_0, beside its line prefetch), 1.47 -> 1.26 (bf16, likewise); 4, 8
// and 12 KiB ahead measured alike.
constexpr int64_t kPagePrimeBytes = 8192;
inline void PrimePageAhead(const void* p, int64_t step) {
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(p) + kPagePrimeBytes;
  if ((ahead & 4095) < static_cast<uintptr_t>(step))
    _mm_prefetch(reinterpret_cast<const char*>(ahead & ~uintptr_t{4095}), _MM_HINT_T1);
}

// The order in which the AVX-512 Q8_0 row kernel's reduction leaves the 16
// blocks of a group (gemm_q8_rows_avx512.cpp): lane l holds block
// kQ8GroupOrder[l].
inline constexpr int kQ8GroupOrder[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};

// Activations quantised like Q8_0 (block of 32, scale d = max|x| / 127,
// q = round(x / d)) for the integer dot-product paths. Scales stay fp32.
// sum128 holds 128 * (the sum of each block's q): the AVX-512 Q8_0 kernel
// multiplies w + 128 (unsigned) by q and takes it off. It and
// scale_grouped (the scales again) are stored for that kernel: each whole
// run of 16 blocks in kQ8GroupOrder, the blocks after the last run in order.
// scale_sum holds, per block in order, the pair (d, d * sum of q): the
// weight types with a zero point (gemm_block32_rows.inc) take what it adds
// from the second.
struct QuantizedActivations {
  int64_t num_tokens = 0, cols = 0;
  AlignedVector<int8_t> q;   // [num_tokens, cols]
  std::vector<float> scale;  // [num_tokens, cols / 32]
  std::vector<float> scale_grouped;  // [num_tokens, cols / 32]
  std::vector<int32_t> sum128;  // [num_tokens, cols / 32]
  std::vector<float> scale_sum;  // [num_tokens, cols / 32, 2]
  const int8_t* row(int64_t t) const { return q.data() + t * cols; }
  const float* row_scale(int64_t t) const { return scale.data() + t * (cols / 32); }
  const float* row_scale_grouped(int64_t t) const { return scale_grouped.data() + t * (cols / 32); }
  const int32_t* row_sum128(int64_t t) const { return sum128.data() + t * (cols / 32); }
  const float* row_scale_sum(int64_t t) const { return scale_sum.data() + t * (cols / 32) * 2; }
};

void QuantizeActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, QuantizedActivations* out);

// Activations quantised per block of 256 (GGML's Q8_K: one scale
// d = max|x| / 127 per 256 values, q = round(x / d), |q| <= 127) for the
// integer dot products with the 256-element super-blocks (K-quants, IQ4_XS),
// plus the sums of q over every 16 and every 32 values, which turn the
// weights' per-sub-block offsets and minimums into one multiply per
// sub-block. cols is a multiple of 256.
struct QuantizedActivationsK {
  int64_t num_tokens = 0, cols = 0;
  AlignedVector<int8_t> q;     // [num_tokens, cols]
  // q again with each run of 128 stored as its values 0..31, 64..95, 32..63,
  // 96..127: the order of the low then the high nibbles of 64 bytes of
  // Q4_K codes, so that one 512-bit load of codes meets one of activations.
  // (AVX-512 only: empty under the AVX2 kernels.)
  AlignedVector<int8_t> q_nibble_order;  // [num_tokens, cols]
  // q again with each run of 64 stored as its values 0..15, 32..47, 16..31,
  // 48..63: the order of the low then the high nibbles of two IQ4_XS
  // sub-blocks' 32 code bytes, so that one 256-bit load of codes meets one
  // of activations (AVX2 only: empty under the AVX-512 kernels).
  AlignedVector<int8_t> q_pair_order;  // [num_tokens, cols]
  std::vector<float> scale;    // [num_tokens, cols / 256]
  // The scales again for the AVX-512 Q4_K / Q5_K kernel that takes two
  // blocks per step (gemm_kquant_rows.inc, RowGroupPairs): per pair of
  // blocks, dx in the pattern of its d lanes (dx0 dx0 dx1 dx1, four
  // times); an odd last block's partner has dx 0. Laid out once per
  // quantisation, shared by every row and matrix. (AVX-512 only: empty
  // under the AVX2 kernels.)
  static constexpr int64_t kPairScaleFloats = 16;
  std::vector<float> scale_pairs;  // [num_tokens, ceil(cols / 512), kPairScaleFloats]
  // -dx * sum32 and -dx * sum16 as floats (dx the block's scale), what the
  // AVX-512 kernels multiply the weights' zero points with in one FMA per
  // token: Q4_K / Q5_K's dmin * m_s (per pair of blocks, 16 floats, an odd
  // last block's partner 0), Q6_K / Q3_K's 2^k d sc_s. (AVX-512 only.)
  std::vector<float> zero_point_sum32;  // [num_tokens, ceil(cols / 512) * 16]
  std::vector<float> zero_point_sum16;  // [num_tokens, cols / 16]
  std::vector<int16_t> sum16;  // [num_tokens, cols / 16]
  std::vector<int16_t> sum32;  // [num_tokens, cols / 32]
  // For the lane-order types (core/lane_order.h; made only when a call has
  // such weights: QuantizeActivationsK's `lanes`), block by block with each
  // block's tokens together ([block][token]...): a pass over tokens reads
  // them at fixed offsets from one pointer per array (with a pointer per
  // token and array, 5 tokens' pointers spilled into vector registers).
  // q in Q6_K's and Q4_K's lane order, Q6_K's -32 sum16_s as int32 (the
  // start of sub-block s's sum), dx; per pair of blocks (Q4_K) dx0 eight
  // times then dx1, and -dx sum32_s of both blocks (an odd last block's
  // partner 0).
  AlignedVector<int8_t> q_lanes16, q_lanes32;  // [cols / 256][num_tokens][256]
  AlignedVector<int32_t> lane_offsets16;       // [cols / 256][num_tokens][16]
  AlignedVector<float> lane_scales;            // [cols / 256][num_tokens]
  AlignedVector<float> lane_scale_pairs;       // [pairs][num_tokens][16]
  AlignedVector<float> lane_mins32;            // [pairs][num_tokens][16]
  const int8_t* row(int64_t t) const { return q.data() + t * cols; }
  const int8_t* row_nibble_order(int64_t t) const { return q_nibble_order.data() + t * cols; }
  const int8_t* row_pair_order(int64_t t) const { return q_pair_order.data() + t * cols; }
  const float* row_scale(int64_t t) const { return scale.data() + t * (cols / 256); }
  const float* row_scale_pairs(int64_t t) const { return scale_pairs.data() + t * ((cols / 256 + 1) / 2) * kPairScaleFloats; }
  const int16_t* row_sum16(int64_t t) const { return sum16.data() + t * (cols / 16); }
  const float* row_zero_point_sum32(int64_t t) const { return zero_point_sum32.data() + t * ((cols / 256 + 1) / 2) * 16; }
  const float* row_zero_point_sum16(int64_t t) const { return zero_point_sum16.data() + t * (cols / 16); }
  const int16_t* row_sum32(int64_t t) const { return sum32.data() + t * (cols / 32); }
};

// With `lanes`, also the lane-order members (weights of a lane-order type
// in the call).
void QuantizeActivationsK(const float* X, int64_t ldx, int64_t T, int64_t cols, QuantizedActivationsK* out,
                          bool lanes = false);

// q = round(x / d) for the 32 values at x (nearest even), d = max|x| / 127
// unless `d` is given (then |x| <= 127 d); returns d. AVX2, the baseline.
float QuantizeBlock32(const float* x, __m256i* q, float d = -1.0f);

// The 32 values at x as 16-bit codes q = round(x / d), d = max|x| / 32767:
// q + 32768 in two bytes, hi[i] * 256 + lo[i]. Sets *sum and *sum_lo to the
// sums of all 32 and of the first 16 codes; returns d.
float QuantizeBlock32Wide(const float* x, uint8_t hi[32], uint8_t lo[32], int32_t* sum, int32_t* sum_lo);

// Which int8 activations the row kernels multiply a weight dtype with,
// outside ExactQ8(): kBlock32 for Q8_0 and the 32-element 4- and 5-bit
// types (QuantizedActivations), kBlock256 for
// the types with an integer row kernel on 256-element super-blocks
// (QuantizedActivationsK), kNone for the rest (decoded to fp32).
enum class IntActivations { kNone, kBlock32, kBlock256 };
inline IntActivations IntActivationsFor(DType dtype) {
  switch (dtype) {
    case DType::kQ8_0: case DType::kQ4_0: case DType::kQ4_1: case DType::kQ5_0: case DType::kQ5_1:
    case DType::kIQ4_NL: case DType::kMXFP4:
      return IntActivations::kBlock32;
    case DType::kQ2_K: case DType::kQ3_K: case DType::kQ4_K: case DType::kQ5_K: case DType::kQ6_K:
    case DType::kIQ4_XS: case DType::kQ4_K_LANES: case DType::kQ6_K_LANES:
      return IntActivations::kBlock256;
    default: return IntActivations::kNone;
  }
}

// The quantised activations one row-kernel call may use; null members mean
// "not prepared": those weights take the fp32 path.
struct RowActivations {
  const QuantizedActivations* q32 = nullptr;
  const QuantizedActivationsK* q256 = nullptr;
};

// Activations for the tile kernels: tokens grouped by `tile_tokens` and
// stored [tile][cols][tile_tokens] (zero-padded past T), so a kernel reads
// the tile's values of one input column contiguously.
struct PackedActivations {
  int64_t num_tokens = 0, cols = 0, tile_tokens = 0;
  std::vector<float> data;
  const float* tile(int64_t j) const { return data.data() + j * cols * tile_tokens; }
};

// Activations for the integer tile kernels (gemm_int_tiles.inc):
// quantised as above, stored as unsigned q + 128 (vpdpbusd and vpmaddubsw
// multiply unsigned by signed bytes) and grouped
// [tile][block][4-byte group][tile_tokens][4], scales [tile][block][tile_tokens].
// Wide activations (planes = 2): quantised to 16 bits per 32 elements (d = max|x| /
// 32767), q + 32768 stored as two byte planes per block, its high bytes
// then its low bytes, each laid out as above.
// The integer tiles convert a block's int8-activation sum (|sum| < 2^22)
// by starting its accumulator on these bits: read as a float it is then
// kIntTileMagic + sum exactly (gemm_int_tiles.inc).
constexpr float kIntTileMagic = 12582912.0f;  // 1.5 * 2^23
constexpr int32_t kIntTileMagicBits = 0x4B400000;
static_assert(std::bit_cast<float>(kIntTileMagicBits) == kIntTileMagic);

struct PackedIntActivations {
  int64_t num_tokens = 0, num_blocks = 0, tile_tokens = 0, planes = 1;
  std::vector<uint8_t> q;
  std::vector<float> scale;
  std::vector<float> sum;  // per block and token: scale * sum of the block's codes (for weights with a bias)
  std::vector<float> sum_lo;  // the same over the block's first 16 codes (a bias per 16: Q2_K)
  std::vector<float> sum_hi;  // and over its last 16
  const uint8_t* tile(int64_t j) const { return q.data() + j * num_blocks * 32 * planes * tile_tokens; }
  const float* tile_scale(int64_t j) const { return scale.data() + j * num_blocks * tile_tokens; }
  const float* tile_sum(int64_t j) const { return sum.data() + j * num_blocks * tile_tokens; }
  const float* tile_sum_lo(int64_t j) const { return sum_lo.data() + j * num_blocks * tile_tokens; }
  const float* tile_sum_hi(int64_t j) const { return sum_hi.data() + j * num_blocks * tile_tokens; }
};

#define LINEAGE_DECLARE_GEMM_KERNELS(A)                                                        \
  /* Y[t, o] for o in [row_begin, row_end), t < T; for BF16 X is SplitActivations' output */ \
  /* (ldx = W.cols()). A block type whose IntActivationsFor() member of qa is set: integer */  \
  /* dot products with it; otherwise decoded to fp32 (the exact path, ExactQ8()). */           \
  A void GemmRows(const TensorView& W, int64_t row_begin, int64_t row_end, const float* X,     \
                  int64_t ldx, const RowActivations& qa, float* Y, int64_t ldy, int64_t T);    \
  /* Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL / MXFP4 rows against qa (gemm_block32_rows.inc). */   \
  A void GemmRowsBlock32(const TensorView& W, int64_t row_begin, int64_t row_end,              \
                         const QuantizedActivations& qa, float* Y, int64_t ldy, int64_t T);    \
  /* Q2_K / Q3_K / Q4_K / Q5_K / Q6_K / IQ4_XS rows against qa (gemm_kquant_rows.inc). */       \
  A void GemmRowsK(const TensorView& W, int64_t row_begin, int64_t row_end,                    \
                   const QuantizedActivationsK& qa, float* Y, int64_t ldy, int64_t T);         \
  /* out[T, cols]: X's rows with each whole block of 2 * lanes columns stored as its even */  \
  /* columns then its odd ones, the last cols % (2 * lanes) as they are (see gemm_rows.inc). */ \
  A void SplitActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, float* out);   \
  A int64_t TileTokens();                                                                       \
  /* Tokens [0, nt) of X (nt <= TileTokens()) as one tile of PackedActivations. */              \
  A void PackTokenTile(const float* X, int64_t ldx, int64_t nt, int64_t cols, float* tile);     \
  /* Row `row` of W decoded to fp32: out[W.cols()]. */                                        \
  A void DecodeRowF32(const TensorView& W, int64_t row, float* out);                          \
  /* num_blocks blocks of quantized t at src decoded to fp32 (= quant::DequantizeBlocks). */  \
  A void DecodeBlocks(DType t, const uint8_t* src, int64_t num_blocks, float* out);           \
  A int64_t TileRows();                                                                         \
  /* Y for rows [row_begin, row_end) (a multiple of TileRows() apart, except at the end). */    \
  A void GemmTiles(const TensorView& W, int64_t row_begin, int64_t row_end,                    \
                   const PackedActivations& px, float* Y, int64_t ldy);                        \
  /* Integer tiles (gemm_int_tiles.inc): whether W's type takes them on this ISA (outside */   \
  /* ExactQ8()), the rows of a panel and the tokens of px's tiles they want, and Y for */       \
  /* rows [row_begin, row_end) (IntTileRows() apart, except at the end). */                     \
  bool IntTileType(DType t);                                                                    \
  int64_t IntTileRows();                                                                        \
  int64_t IntTileTokens();                                                                      \
  A void GemmIntTiles(const TensorView& W, int64_t row_begin, int64_t row_end,                 \
                      const PackedIntActivations& px, float* Y, int64_t ldy);

namespace avx2 {
LINEAGE_DECLARE_GEMM_KERNELS()
}
namespace avx512 {
LINEAGE_DECLARE_GEMM_KERNELS(LINEAGE_AVX512)
}
#undef LINEAGE_DECLARE_GEMM_KERNELS

}  // namespace lineage::kernels
