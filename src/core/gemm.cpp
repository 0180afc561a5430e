// Gemm: chooses the regime and ISA. Few tokens go to the row kernels through
// GemmMulti (gemm_multi.cpp); many tokens are tiled here: activations packed
// once per call, weight panels split over the pool. See gemm_internal.h for
// the kernels.
#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/gemm_internal.h"
#include "core/gemm_multi.h"
#include "core/kernels.h"

namespace lineage::kernels {
namespace {

template <typename Fn>
void ForRanges(ThreadPool* pool, int64_t n, int64_t grain, const Fn& fn) {
  if (pool && pool->size() > 1) {
    pool->parallel_for(n, [&](int64_t b, int64_t e, int) { fn(b, e); }, grain);
  } else {
    fn(0, n);
  }
}

void PackActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, bool wide, ThreadPool* pool,
                     PackedActivations* out) {
  const int64_t tile = wide ? avx512::TileTokens() : avx2::TileTokens();
  out->num_tokens = T;
  out->cols = cols;
  out->tile_tokens = tile;
  const int64_t num_tiles = (T + tile - 1) / tile;
  out->data.resize(static_cast<size_t>(num_tiles * cols * tile));
  ForRanges(pool, num_tiles, 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t nt = std::min(tile, T - j * tile);
      float* dst = out->data.data() + j * cols * tile;
      if (wide) {
        avx512::PackTokenTile(X + j * tile * ldx, ldx, nt, cols, dst);
      } else {
        avx2::PackTokenTile(X + j * tile * ldx, ldx, nt, cols, dst);
      }
    }
  });
}

// Quantises X and lays it out for GemmIntTiles in tiles of `tile` tokens;
// bits16: to 16 bits (PackedIntActivations).
void PackIntActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, int64_t tile, bool bits16,
                        ThreadPool* pool, PackedIntActivations* out) {
  const int64_t num_blocks = cols / 32;
  const int64_t num_tiles = (T + tile - 1) / tile;
  out->num_tokens = T;
  out->num_blocks = num_blocks;
  out->tile_tokens = tile;
  out->planes = bits16 ? 2 : 1;
  // The tokens past T in the last tile are never stored; 128 keeps them small.
  out->q.assign(static_cast<size_t>(num_tiles * num_blocks * 32 * out->planes * tile), 128);
  out->scale.assign(static_cast<size_t>(num_tiles * num_blocks * tile), 0.0f);
  out->sum.assign(static_cast<size_t>(num_tiles * num_blocks * tile), 0.0f);
  out->sum_lo.assign(static_cast<size_t>(num_tiles * num_blocks * tile), 0.0f);
  out->sum_hi.assign(static_cast<size_t>(num_tiles * num_blocks * tile), 0.0f);
  ForRanges(pool, num_tiles, 1, [&](int64_t j0, int64_t j1) {
    const __m256i to_unsigned = _mm256_set1_epi8(static_cast<char>(0x80));
    alignas(32) uint8_t planes[2][32];
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t t0 = j * tile, nt = std::min(tile, T - t0);
      uint8_t* dst = out->q.data() + j * num_blocks * 32 * out->planes * tile;
      float* dst_scale = out->scale.data() + j * num_blocks * tile;
      float* dst_sum = out->sum.data() + j * num_blocks * tile;
      float* dst_sum_lo = out->sum_lo.data() + j * num_blocks * tile;
      float* dst_sum_hi = out->sum_hi.data() + j * num_blocks * tile;
      for (int64_t u = 0; u < nt; ++u) {
        for (int64_t b = 0; b < num_blocks; ++b) {
          const float* x = X + (t0 + u) * ldx + b * 32;
          float scale;
          int64_t sum, sum_lo;
          if (bits16) {
            int32_t s, s_lo;
            scale = QuantizeBlock32Wide(x, planes[0], planes[1], &s, &s_lo);
            sum = s, sum_lo = s_lo;
          } else {
            __m256i q;
            scale = QuantizeBlock32(x, &q);
            const __m256i qu = _mm256_xor_si256(q, to_unsigned);
            // sum(q) = sum(q + 128) - 32 * 128, by sums of absolute differences against 0.
            const __m256i sad = _mm256_sad_epu8(qu, _mm256_setzero_si256());
            const int64_t biased_lo = _mm256_extract_epi64(sad, 0) + _mm256_extract_epi64(sad, 1);
            sum = biased_lo + _mm256_extract_epi64(sad, 2) + _mm256_extract_epi64(sad, 3) - 32 * 128;
            sum_lo = biased_lo - 16 * 128;
            _mm256_store_si256(reinterpret_cast<__m256i*>(planes[0]), qu);
          }
          dst_scale[b * tile + u] = scale;
          dst_sum[b * tile + u] = scale * static_cast<float>(sum);
          dst_sum_lo[b * tile + u] = scale * static_cast<float>(sum_lo);
          dst_sum_hi[b * tile + u] = scale * static_cast<float>(sum - sum_lo);
          for (int64_t p = 0; p < out->planes; ++p)
            for (int g = 0; g < 8; ++g)  // [block][plane][group][token][4]
              std::memcpy(dst + ((b * out->planes + p) * 32 + g * 4) * tile + u * 4, planes[p] + 4 * g, 4);
        }
      }
    }
  });
}

}  // namespace

int64_t Int8ActivationBlock(DType dtype) {
  if (ExactQ8()) return 0;
  switch (IntActivationsFor(dtype)) {
    case IntActivations::kBlock32: return 32;
    case IntActivations::kBlock256: return 256;
    default: return 0;
  }
}

void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool) {
  const int64_t rows = W.rows(), cols = W.cols();
  if (rows <= 0 || T <= 0) return;
  if (T < TileMinTokens(W.dtype)) {
    const GemmTarget target{&W, Y, ldy};
    GemmMulti(std::span(&target, 1), X, ldx, T, pool);
    return;
  }
  const bool wide = ActiveIsa() == Isa::kAvx512;
  if (!ExactQ8() && (wide ? avx512::IntTileType(W.dtype) : avx2::IntTileType(W.dtype))) {
    thread_local PackedIntActivations pq_storage;
    PackedIntActivations& pq = pq_storage;
    const int64_t tile_tokens = wide ? avx512::IntTileTokens() : avx2::IntTileTokens();
    const int64_t tile_rows = wide ? avx512::IntTileRows() : avx2::IntTileRows();
    PackIntActivations(X, ldx, T, cols, tile_tokens, W.wide_activations, pool, &pq);
    ForRanges(pool, (rows + tile_rows - 1) / tile_rows, 1, [&](int64_t p0, int64_t p1) {
      const int64_t r0 = p0 * tile_rows, r1 = std::min(rows, p1 * tile_rows);
      if (wide) {
        avx512::GemmIntTiles(W, r0, r1, pq, Y, ldy);
      } else {
        avx2::GemmIntTiles(W, r0, r1, pq, Y, ldy);
      }
    });
    return;
  }
  thread_local PackedActivations px_storage;
  PackedActivations& px = px_storage;
  const int64_t tile_rows = wide ? avx512::TileRows() : avx2::TileRows();
  PackActivations(X, ldx, T, cols, wide, pool, &px);
  const int64_t panels = (rows + tile_rows - 1) / tile_rows;
  ForRanges(pool, panels, 1, [&](int64_t p0, int64_t p1) {
    const int64_t r0 = p0 * tile_rows, r1 = std::min(rows, p1 * tile_rows);
    if (wide) {
      avx512::GemmTiles(W, r0, r1, px, Y, ldy);
    } else {
      avx2::GemmTiles(W, r0, r1, px, Y, ldy);
    }
  });
}

}  // namespace lineage::kernels
