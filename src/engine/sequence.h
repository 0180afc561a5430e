// Sequence: the running model state of one token sequence — a KV page table
// over every attention layer plus the recurrent state of every GDN layer —
// and the snapshot / admission primitives of DESIGN.md §3.6:
//
//   Snap()            state at the current length: pages and the recurrent
//                     state shared. O(page pointers), never O(context).
//   FromSnapshot      a sequence continuing from a snapshot.
//   FromCheckpoint    recurrent state at n + the first n tokens of a longer
//                     snapshot's pages (a checkpoint borrows its entry's KV).
//   Sequence(layouts) a sequence from nothing.
//
// Admission copies the recurrent state and, lazily on the first append, the
// one partly filled page it starts inside (copy-on-write); nothing else.
// The recurrent state is copy-on-write too: a snapshot shares the running
// buffer, and the sequence takes a private copy only when it runs again
// (OwnRecurrent(), called by the engine before each step). So a commit at the
// prompt end costs no copy before the first token, and a sequence that ends
// right after a snapshot never copies at all.
//
// Ownership: a Sequence owns its page table and recurrent state; pages are
// shared with snapshots. Thread-safety: one thread at a time per Sequence;
// Snapshots are immutable and shareable.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cache/kv_pages.h"
#include "core/status.h"
#include "engine/recurrent_state.h"

namespace lineage::engine {

struct Snapshot {
  std::shared_ptr<const cache::PagedKv> kv;
  std::shared_ptr<const RecurrentState> recurrent;  // null for attention-only models
  int64_t num_tokens() const { return kv ? kv->num_tokens() : 0; }
};

class Sequence {
 public:
  Sequence(const cache::KvLayout& kv_layout, const RecurrentLayout& rec_layout)
      : kv_(kv_layout), rec_(std::make_shared<RecurrentState>(rec_layout)) {}

  // `kv` must be a PagedKv of the same layout; `recurrent` a RecurrentState of
  // the same layout taken at kv.num_tokens() (null for attention-only models).
  static Result<Sequence> FromSnapshot(const cache::KvLayout& kv_layout, const RecurrentLayout& rec_layout,
                                       const cache::KvView& kv, const cache::RecurrentBlob* recurrent);
  // `recurrent` was taken at length n <= longer.num_tokens(); KV rows [0, n)
  // come from `longer`.
  static Result<Sequence> FromCheckpoint(const cache::KvLayout& kv_layout, const RecurrentLayout& rec_layout,
                                         const cache::RecurrentBlob* recurrent, int64_t n,
                                         const cache::KvView& longer);

  int64_t num_tokens() const { return kv_.num_tokens(); }
  cache::PageTable& kv() { return kv_; }
  const cache::PageTable& kv() const { return kv_; }
  // The writable state; copies it first if a snapshot shares it. Threads of
  // one step may call this together only after OwnRecurrent().
  RecurrentState& recurrent() {
    OwnRecurrent();
    return *rec_;
  }
  const RecurrentState& recurrent() const { return *rec_; }
  // Takes a private copy of the recurrent state if a snapshot shares it.
  void OwnRecurrent();

  // Back to length n <= num_tokens() (Engine::Verify, Engine::RollBack):
  // KV rows past n are forgotten and, with `state`, the recurrent state and
  // `*state` trade places, so a caller reusing its buffer allocates nothing
  // per round. (Attention-only models: `state` is ignored and may be null.)
  void Rewind(int64_t n, std::shared_ptr<RecurrentState>* state);

  // The trunk's final-normed hidden rows of the sequence's last step (an
  // engine with the MTP block on keeps them: the block's row at position p
  // reads the state at p - 1). Kept for the last row of a step, or for
  // every row of a verification step; not part of snapshots, so a sequence
  // admitted from one starts without (its first MTP row reads zeros).
  void KeepHidden(int64_t first_pos, const float* rows, int64_t num_rows, int64_t hidden);
  // The row at position pos, or null when not kept.
  const float* Hidden(int64_t pos) const;

  Snapshot Snap() const;
  // Just the recurrent state (a checkpoint at the current length), shared
  // until the sequence runs again.
  std::shared_ptr<const RecurrentState> CopyRecurrent() const;

 private:
  Sequence(cache::PageTable kv, std::shared_ptr<RecurrentState> rec) : kv_(std::move(kv)), rec_(std::move(rec)) {}

  cache::PageTable kv_;
  std::shared_ptr<RecurrentState> rec_;  // never null; shared with snapshots until OwnRecurrent()
  std::vector<float> hidden_;            // [rows, H] from position hidden_first_
  int64_t hidden_first_ = 0, hidden_rows_ = 0;
};

}  // namespace lineage::engine
