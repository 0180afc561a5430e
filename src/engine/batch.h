// Batch: the rows one forward step runs. A step is a list of segments, each a
// run of new tokens of one sequence; its rows are laid out back to back, so
// every dense projection is one Gemm over all rows of all segments. Prefill
// is one segment of many tokens; batched decode is many segments of one.
//
// Invariants: segments name distinct sequences; segment s occupies rows
// [row_begin, row_begin + num_tokens) and its token i sits at position
// seq->num_tokens() + i (the sequence's length before the step).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/sequence.h"

namespace lineage::engine {

// Where a verification step kept for a rollback by replay writes
// (Engine::Verify with a RollbackLog): the state after the segment goes to
// `after` while the sequence's stays the state before it; the log gets the
// segment's raw conv rows and each head's per-token k, row decays and delta
// (kernels::RecurrentOutputs::log), what Engine::RollBack replays.
struct RollbackTarget {
  RecurrentState* after = nullptr;
  float* log = nullptr;
  RecurrentLayout layout;
  int64_t tokens = 0;

  static int64_t Floats(const RecurrentLayout& l, int64_t tokens) {
    return l.num_layers * tokens * (l.conv_dim + l.num_v_heads * (2 * l.k_dim + l.v_dim));
  }
  // Recurrent layer `index`'s raw (pre-conv) rows, [tokens, conv_dim].
  float* raw(int64_t index) const { return log + index * tokens * layout.conv_dim; }
  // Head h of recurrent layer `index`: [tokens, 2 k_dim + v_dim].
  float* head(int64_t index, int64_t h) const {
    const int64_t per_head = tokens * (2 * layout.k_dim + layout.v_dim);
    return log + layout.num_layers * tokens * layout.conv_dim + (index * layout.num_v_heads + h) * per_head;
  }
};

struct Segment {
  Sequence* seq = nullptr;
  const int32_t* tokens = nullptr;
  int64_t num_tokens = 0;
  int64_t row_begin = 0;
  // Recurrent states to capture inside the segment: after its first
  // capture_offsets[i] tokens (ascending, in [1, num_tokens]) every
  // recurrent layer writes its conv window and delta state into
  // captures[i] (same layout as the sequence's). The recurrent scan is split
  // there; the projections are not, so a capture costs no extra step.
  std::span<const int64_t> capture_offsets;
  std::span<const std::shared_ptr<RecurrentState>> captures;
  // Logits of every row, not only the last (verification of drafts).
  bool logits_every_row = false;
  // Each row computed exactly as a decode step of that row alone would
  // (verification: a verified token's logits are its decode logits): the
  // kernels that would mix rows choose their per-row form, the recurrent
  // layers the token-by-token recurrence.
  bool rows_as_decode = false;
  // Verification kept for a rollback by replay instead of captures (with
  // rows_as_decode; no capture_offsets).
  const RollbackTarget* rollback = nullptr;
  int64_t logits_rows() const { return logits_every_row ? num_tokens : 1; }
  int64_t start_pos() const { return seq->num_tokens(); }
};

struct Batch {
  std::vector<Segment> segments;
  int64_t num_rows = 0;
  int64_t max_tokens_per_segment = 0;

  void Add(Sequence* seq, const int32_t* tokens, int64_t num_tokens) {
    Segment s;
    s.seq = seq;
    s.tokens = tokens;
    s.num_tokens = num_tokens;
    s.row_begin = num_rows;
    segments.push_back(s);
    num_rows += num_tokens;
    if (num_tokens > max_tokens_per_segment) max_tokens_per_segment = num_tokens;
  }
};

}  // namespace lineage::engine
