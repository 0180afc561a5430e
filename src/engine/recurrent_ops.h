// Building blocks both recurrent mixers (Gated DeltaNet, gdn_layer.cpp, and
// KDA, kda_layer.cpp) are made of: the causal depthwise convolution + SiLU
// over raw projections with a sequence's conv window (spec §2.2, §7.2), and
// the softplus of their decays. Stateless; the caller splits channels into
// blocks across threads (distinct blocks of one window may run concurrently).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/kernels.h"
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

// Head h of recurrent layer `index` for a segment's recurrence (`floats`
// values a head): the state it updates in place, or with a rollback target
// (Segment::rollback) the target's, read first from the sequence's
// (`from`, left as it was), with the head's log.
struct HeadState {
  float* S;
  const float* from;
  float* log;
};
inline HeadState HeadStateOf(const Segment& s, int64_t index, int64_t h, int64_t floats) {
  float* own = s.seq->recurrent().delta(index) + h * floats;
  if (s.rollback == nullptr) return {own, nullptr, nullptr};
  return {s.rollback->after->delta(index) + h * floats, own, s.rollback->head(index, h)};
}

// The raw rows of a verified segment kept for a rollback (Segment::rollback)
// into its log, for recurrent layer `index`; nothing otherwise.
void LogRawRows(int64_t conv_dim, int64_t index, const StepContext& ctx, const float* mixed);

// One head's recurrence over a segment, with the segment's captures of
// its state S (state_floats floats; `dst(i)` the buffer of capture i).
// Where every piece would run token by token (decode rows, or fewer tokens
// than ctx.delta_chunked_min_tokens) it is one call, `recurrent(t0 = 0, n =
// T, after)` with after[t] = the buffer of the capture at offset t + 1 or
// null, for a recurrence that writes each capture as it passes
// (kernels::DeltaRuleRecurrent, KdaRecurrent); a second capture at one
// offset is copied from the first afterwards. Otherwise the rows are split
// at the capture offsets, pieces of ctx.delta_chunked_min_tokens or more run
// `chunked(t0, n)`, shorter ones `recurrent(t0, n, nullptr)`, and S is copied
// to each capture after its piece.
//
// With a rollback target (Segment::rollback, verification) the whole run
// reads the head's state from `from` and leaves it as it was, writes the
// state after the run to S and logs each token to `log`.
template <typename Recurrent, typename Chunked, typename Dst>
void ScanSegment(const Segment& s, const StepContext& ctx, const float* S, int64_t state_floats, Recurrent recurrent,
                 Chunked chunked, Dst dst, const float* from = nullptr, float* log = nullptr) {
  if (s.rows_as_decode || s.num_tokens < ctx.delta_chunked_min_tokens) {
    thread_local std::vector<float*> after;
    after.assign(static_cast<size_t>(s.num_tokens), nullptr);
    bool twice = false;
    for (size_t i = 0; i < s.capture_offsets.size(); ++i) {
      float*& at = after[static_cast<size_t>(s.capture_offsets[i] - 1)];
      if (at == nullptr) {
        at = dst(i);
      } else {
        twice = true;
      }
    }
    recurrent(int64_t{0}, s.num_tokens, kernels::RecurrentOutputs{after.data(), from, log});
    for (size_t i = 0; twice && i < s.capture_offsets.size(); ++i) {
      float* first = after[static_cast<size_t>(s.capture_offsets[i] - 1)];
      float* to = dst(i);
      if (to != first) kernels::CopyStreaming(first, state_floats, to);
    }
    return;
  }
  const auto piece = [&](int64_t t0, int64_t t1) {
    if (t1 - t0 >= ctx.delta_chunked_min_tokens) {
      chunked(t0, t1 - t0);
    } else {
      recurrent(t0, t1 - t0, kernels::RecurrentOutputs{});
    }
  };
  int64_t t0 = 0;
  for (size_t i = 0; i < s.capture_offsets.size(); ++i) {
    const int64_t p = s.capture_offsets[i];
    if (p > t0) piece(t0, p);
    t0 = p;
    kernels::CopyStreaming(S, state_floats, dst(i));
  }
  if (s.num_tokens > t0) piece(t0, s.num_tokens);
}

// Rows [R, ld] that start with q (heads x d) then k (heads x d) after the
// conv: each head L2-normalised (eps 1e-6), q then scaled by 1/sqrt(d).
void NormalizeQk(float* rows, int64_t R, int64_t ld, int64_t heads, int64_t d);

inline float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// y[c] += w[c] * x[c] for n values.
void MulAdd(const float* w, const float* x, float* y, int64_t n);

}  // namespace lineage::engine
