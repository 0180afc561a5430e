#include "engine/recurrent_ops.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/kernels.h"

namespace lineage::engine {

// y[c] += w[c] * x[c]. Written with AVX2 (the build's baseline) because -O2
// leaves loops of unknown length scalar.
void MulAdd(const float* w, const float* x, float* y, int64_t n) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    _mm256_storeu_ps(y + c, _mm256_fmadd_ps(_mm256_loadu_ps(w + c), _mm256_loadu_ps(x + c), _mm256_loadu_ps(y + c)));
  }
  for (; c < n; ++c) y[c] += w[c] * x[c];
}

void CausalConv(const float* weight, int64_t K, int64_t conv_dim, int64_t c0, int64_t c1, float* window,
                const float* in, int64_t ld, int64_t T, float* y) {
  const int64_t keep = K - 1, n = c1 - c0;
  if (T == 1) {
    // Decode: one output per channel, so the taps are read in place (a
    // tap-major copy would touch every weight twice to use it once). The
    // same fused multiply-adds in the same order as the rows below.
    int64_t c = c0;
    if (K == 4) {  // every Qwen3.5 / Qwen3-Next / Kimi conv: 8 channels' taps transposed in registers
      const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
      for (; c + 8 <= c1; c += 8) {
        const float* wc = weight + c * 4;  // 8 channels x 4 taps
        const __m256 w0 = _mm256_loadu_ps(wc), w1 = _mm256_loadu_ps(wc + 8);
        const __m256 w2 = _mm256_loadu_ps(wc + 16), w3 = _mm256_loadu_ps(wc + 24);
        const __m256 lo01 = _mm256_unpacklo_ps(w0, w1), hi01 = _mm256_unpackhi_ps(w0, w1);
        const __m256 lo23 = _mm256_unpacklo_ps(w2, w3), hi23 = _mm256_unpackhi_ps(w2, w3);
        // tap j of channels in the order 0 2 4 6 1 3 5 7, then put back in order
        __m256 tap[4] = {_mm256_shuffle_ps(lo01, lo23, 0x44), _mm256_shuffle_ps(lo01, lo23, 0xee),
                         _mm256_shuffle_ps(hi01, hi23, 0x44), _mm256_shuffle_ps(hi01, hi23, 0xee)};
        __m256 acc = _mm256_setzero_ps();
        for (int j = 0; j < 3; ++j)
          acc = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(tap[j], order), _mm256_loadu_ps(window + j * conv_dim + c), acc);
        _mm256_storeu_ps(y + c, _mm256_fmadd_ps(_mm256_permutevar8x32_ps(tap[3], order), _mm256_loadu_ps(in + c), acc));
      }
    }
    for (; c < c1; ++c) {
      const float* wc = weight + c * K;
      float acc = 0.0f;
      for (int64_t j = 0; j < keep; ++j) acc = std::fma(wc[j], window[j * conv_dim + c], acc);
      y[c] = std::fma(wc[keep], in[c], acc);
    }
    kernels::Silu(y + c0, y + c0, n);
    for (int64_t i = 0; i + 1 < keep; ++i)
      std::memcpy(window + i * conv_dim + c0, window + (i + 1) * conv_dim + c0, static_cast<size_t>(n) * 4);
    if (keep > 0) std::memcpy(window + (keep - 1) * conv_dim + c0, in + c0, static_cast<size_t>(n) * 4);
    return;
  }
  // Tap-major copy of this block's weights, so the channel loop is contiguous.
  thread_local std::vector<float> taps;
  taps.resize(static_cast<size_t>(K * n));
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t j = 0; j < K; ++j) taps[j * n + c] = weight[(c0 + c) * K + j];
  }
  for (int64_t t = 0; t < T; ++t) {
    float* yrow = y + t * ld + c0;
    for (int64_t c = 0; c < n; ++c) yrow[c] = 0.0f;
    for (int64_t j = 0; j < K; ++j) {
      const int64_t u = t - keep + j;  // input row; negative rows come from the window
      const float* xrow = (u < 0 ? window + (keep + u) * conv_dim : in + u * ld) + c0;
      MulAdd(taps.data() + j * n, xrow, yrow, n);
    }
    kernels::Silu(yrow, yrow, n);
  }
  // New window = last K-1 rows of [window ; in].
  for (int64_t i = 0; i < keep; ++i) {
    const int64_t u = T - keep + i;  // source row in the concatenation, relative to `in`
    float* dst = window + i * conv_dim;
    if (u >= 0) {
      std::memcpy(dst + c0, in + u * ld + c0, static_cast<size_t>(c1 - c0) * 4);
    } else {
      // u < 0 refers to window row keep + u, which is >= i: moving rows up in
      // increasing i never overwrites a row still to be read.
      std::memcpy(dst + c0, window + (keep + u) * conv_dim + c0, static_cast<size_t>(c1 - c0) * 4);
    }
  }
}


void NormalizeQk(float* rows, int64_t R, int64_t ld, int64_t heads, int64_t d) {
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int64_t r = 0; r < R; ++r) {
    float* row = rows + r * ld;
    kernels::L2Normalize(row, 2 * heads, d, 1e-6f);  // q heads then k heads, adjacent
    kernels::Scale(row, q_scale, heads * d);
  }
}

void LogRawRows(int64_t conv_dim, int64_t index, const StepContext& ctx, const float* mixed) {
  for (const Segment& s : ctx.batch.segments) {
    if (s.rollback == nullptr) continue;
    const float* rows = mixed + s.row_begin * conv_dim;
    std::copy(rows, rows + s.num_tokens * conv_dim, s.rollback->raw(index));
  }
}

void CaptureConvWindows(int64_t K, int64_t conv_dim, int64_t index, const StepContext& ctx, const float* mixed) {
  const int64_t keep = K - 1;
  for (const Segment& s : ctx.batch.segments) {
    if (s.capture_offsets.empty()) continue;
    const float* window = s.seq->recurrent().conv(index);
    for (size_t i = 0; i < s.capture_offsets.size(); ++i) {
      const int64_t p = s.capture_offsets[i];
      float* dst = s.captures[i]->conv(index);
      for (int64_t j = 0; j < keep; ++j) {
        const int64_t t = p - keep + j;  // the raw row window row j holds, relative to the segment
        const float* src = t >= 0 ? mixed + (s.row_begin + t) * conv_dim : window + (keep + t) * conv_dim;
        std::copy(src, src + conv_dim, dst + j * conv_dim);
      }
    }
  }
}

void ConvAllSegments(const float* weight, int64_t K, int64_t conv_dim, int64_t index, const StepContext& ctx,
                     const float* mixed, float* conv) {
  const std::vector<Segment>& segs = ctx.batch.segments;
  const int64_t kConvGrain = 256;
  const int64_t num_blocks = (conv_dim + kConvGrain - 1) / kConvGrain;
  ctx.pool->parallel_for(static_cast<int64_t>(segs.size()) * num_blocks, [&](int64_t b0, int64_t b1, int) {
    for (int64_t b = b0; b < b1; ++b) {
      const Segment& s = segs[b / num_blocks];
      const int64_t c0 = (b % num_blocks) * kConvGrain, c1 = std::min(conv_dim, c0 + kConvGrain);
      CausalConv(weight, K, conv_dim, c0, c1, s.seq->recurrent().conv(index), mixed + s.row_begin * conv_dim,
                 conv_dim, s.num_tokens, conv + s.row_begin * conv_dim);
    }
  });
}

}  // namespace lineage::engine
