// Gemm: chooses the regime and ISA, prepares activations once per call and
// splits output rows over the pool. See gemm_internal.h for the kernels.
#include <algorithm>
#include <cmath>

#include "core/gemm_internal.h"
#include "core/kernels.h"

namespace lineage::kernels {
namespace {

// From this many tokens on, repacking a weight panel (one pass over it) is
// repaid by reusing it across register tiles of tokens.
constexpr int64_t kTileMinTokens = 4;

// Rows per parallel work item in the row regime: big enough that a range
// split lands on a 4-row group boundary and dispatch stays negligible.
constexpr int64_t kRowGroup = 16;

template <typename Fn>
void ForRanges(ThreadPool* pool, int64_t n, int64_t grain, const Fn& fn) {
  if (pool && pool->size() > 1) {
    pool->parallel_for(n, [&](int64_t b, int64_t e, int) { fn(b, e); }, grain);
  } else {
    fn(0, n);
  }
}

void PackActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, int64_t tile_tokens,
                     ThreadPool* pool, PackedActivations* out) {
  out->num_tokens = T;
  out->cols = cols;
  out->tile_tokens = tile_tokens;
  const int64_t num_tiles = (T + tile_tokens - 1) / tile_tokens;
  out->data.resize(static_cast<size_t>(num_tiles * cols * tile_tokens));
  ForRanges(pool, num_tiles, 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      float* dst = out->data.data() + j * cols * tile_tokens;
      for (int64_t u = 0; u < tile_tokens; ++u) {
        const int64_t t = j * tile_tokens + u;
        if (t < T) {
          const float* x = X + t * ldx;
          for (int64_t i = 0; i < cols; ++i) dst[i * tile_tokens + u] = x[i];
        } else {
          for (int64_t i = 0; i < cols; ++i) dst[i * tile_tokens + u] = 0.0f;
        }
      }
    }
  });
}

}  // namespace

void QuantizeActivations(const float* X, int64_t ldx, int64_t T, int64_t cols, QuantizedActivations* out) {
  out->num_tokens = T;
  out->cols = cols;
  out->q.resize(static_cast<size_t>(T * cols));
  out->scale.resize(static_cast<size_t>(T * (cols / 32)));
  out->sum.resize(out->scale.size());
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t b = 0; b < cols / 32; ++b) {
      const float* x = X + t * ldx + b * 32;
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
      const float d = amax / 127.0f;
      const float inv = d > 0 ? 1.0f / d : 0.0f;
      int8_t* q = out->q.data() + t * cols + b * 32;
      int32_t sum = 0;
      for (int i = 0; i < 32; ++i) {
        // |x * inv| <= 127 up to rounding; the clamp keeps -128 out of range.
        float v = std::min(127.0f, std::max(-127.0f, std::nearbyint(x[i] * inv)));
        q[i] = static_cast<int8_t>(v);
        sum += q[i];
      }
      out->scale[t * (cols / 32) + b] = d;
      out->sum[t * (cols / 32) + b] = sum;
    }
  }
}

void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool) {
  const int64_t rows = W.rows(), cols = W.cols();
  if (rows <= 0 || T <= 0) return;
  const bool wide = ActiveIsa() == Isa::kAvx512;
  if (T < kTileMinTokens) {
    // A lambda body naming a thread_local would see the worker's own copy:
    // capture a reference to the caller's.
    thread_local QuantizedActivations qx_storage;
    QuantizedActivations& qx = qx_storage;
    if (W.dtype == DType::kQ8_0) QuantizeActivations(X, ldx, T, cols, &qx);
    const int64_t groups = (rows + kRowGroup - 1) / kRowGroup;
    ForRanges(pool, groups, 4, [&](int64_t g0, int64_t g1) {
      const int64_t r0 = g0 * kRowGroup, r1 = std::min(rows, g1 * kRowGroup);
      if (wide) {
        avx512::GemmRows(W, r0, r1, X, ldx, &qx, Y, ldy, T);
      } else {
        avx2::GemmRows(W, r0, r1, X, ldx, &qx, Y, ldy, T);
      }
    });
    return;
  }
  thread_local PackedActivations px_storage;
  PackedActivations& px = px_storage;
  const int64_t tile_rows = wide ? avx512::TileRows() : avx2::TileRows();
  PackActivations(X, ldx, T, cols, wide ? avx512::TileTokens() : avx2::TileTokens(), pool, &px);
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
