// Building blocks both recurrent mixers (Gated DeltaNet, gdn_layer.cpp, and
// KDA, kda_layer.cpp) are made of: the causal depthwise convolution + SiLU
// over raw projections with a sequence's conv window (spec §2.2, §7.2), and
// the softplus of their decays. Stateless; the caller splits channels into
// blocks across threads (distinct blocks of one window may run concurrently).
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/layers.h"

namespace lineage::engine {

// Causal depthwise conv + SiLU over channels [c0, c1) of one segment's T raw
// rows `in` (stride ld), continuing from `window` [K-1, conv_dim] (oldest
// first), then slides the window to the segment's last K-1 raw rows.
// weight: [conv_dim, K]; y: [T, ld], columns [c0, c1) written.
void CausalConv(const float* weight, int64_t K, int64_t conv_dim, int64_t c0, int64_t c1, float* window,
                const float* in, int64_t ld, int64_t T, float* y);

// CausalConv over every segment of ctx's batch, channel blocks across the
// pool: raw rows `mixed` [R, conv_dim] to `conv` [R, conv_dim], each
// segment continuing its sequence's window of recurrent layer `index`.
void ConvAllSegments(const float* weight, int64_t K, int64_t conv_dim, int64_t index, const StepContext& ctx,
                     const float* mixed, float* conv);

// Before the conv of recurrent layer `index` slides the windows: writes the
// conv window each capture of each segment will hold (the K-1 raw rows
// before its offset, from the segment's rows and its sequence's window).
void CaptureConvWindows(int64_t K, int64_t conv_dim, int64_t index, const StepContext& ctx, const float* mixed);

// Runs `scan(t0, t1)` over a segment's rows in pieces split at its capture
// offsets, calling `keep(i)` after the piece that ends at capture i.
template <typename Scan, typename Keep>
void ScanWithCaptures(const Segment& s, Scan scan, Keep keep) {
  int64_t t0 = 0;
  for (size_t i = 0; i < s.capture_offsets.size(); ++i) {
    const int64_t p = s.capture_offsets[i];
    if (p > t0) scan(t0, p);
    t0 = p;
    keep(i);
  }
  if (s.num_tokens > t0) scan(t0, s.num_tokens);
}

// Rows [R, ld] that start with q (heads x d) then k (heads x d) after the
// conv: each head L2-normalised (eps 1e-6), q then scaled by 1/sqrt(d).
void NormalizeQk(float* rows, int64_t R, int64_t ld, int64_t heads, int64_t d);

inline float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// y[c] += w[c] * x[c] for n values.
void MulAdd(const float* w, const float* x, float* y, int64_t n);

}  // namespace lineage::engine
