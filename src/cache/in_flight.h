// InFlightTable: the prompts being prefilled right now, so that a request
// whose prefix another sequence is computing waits for that sequence's
// capture instead of computing the same tokens again (issue 12, in-flight
// sharing; DESIGN.md §3.3, concurrency).
//
// A prefill registers its prompt and how far it has got. A later lookup
// finds the registered prompt that shares the most leading tokens with its
// own (a radix tree, as for stored entries) and, when the shared prefix is
// worth it and the owner has not prefilled past the point yet, asks the
// owner to capture the state there ("wanted"). The owner captures it like a
// planned point and publishes it with its KV rows; the waiter takes it. When
// the owner ends first (cancelled, failed) the point never comes and the
// waiter falls back to its own restore point.
//
// Invariants: a published point's KV holds exactly n rows of the owner's
// prompt and its state is the state after them; a wanted point is below the
// owner's prompt length; waits only point at prefills registered earlier
// (no cycles).
// Ownership: the table copies the tokens it indexes and shares payloads.
// Thread-safety: none; LineageCache holds its lock around every call.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/cache_types.h"
#include "cache/payload.h"
#include "cache/prefix_tree.h"

namespace lineage::cache {

// A capture another request waits for: prefill `owner`'s point at n.
struct SharedWait {
  uint64_t owner = 0;
  int64_t n = 0;
};

// What a waiter finds when it asks again.
enum class SharedState : uint8_t { kPending, kReady, kGone };

class InFlightTable {
 public:
  // Registers a prefill of `tokens` that starts at `progress_tokens` (its
  // restore point) and captures at `planned` (its own capture plan, any
  // order). Returns its id (never 0).
  uint64_t Add(TokenSpan tokens, int64_t progress_tokens, std::vector<int64_t> planned = {});
  // The prefill ended (committed, cancelled or failed): its unpublished
  // wanted points will never come; published ones stay until their waiters
  // took them.
  void Remove(uint64_t id);
  // How far the prefill has got or is getting: the end of the step running
  // now, since a point inside it can no longer be added to its captures.
  void SetProgress(uint64_t id, int64_t progress_tokens);

  // A wait for `prompt` (restore point r) on the registered prefill sharing
  // the most leading tokens with it, at the anchor's slack before where they
  // part (never m), when that gains at least min_gain_tokens over r and the
  // owner can still capture there; when it has got past that point, at the
  // last point of its own plan below it (an anchor, say), which it captures
  // anyway. Marks the point wanted.
  std::optional<SharedWait> FindWait(uint64_t self, TokenSpan prompt, int64_t restore_tokens,
                                     int64_t min_gain_tokens);

  // Wanted lengths n of `id` with from < n <= to, ascending.
  std::vector<int64_t> WantedIn(uint64_t id, int64_t from_tokens, int64_t to_tokens) const;
  // Whether n is a wanted point of `id` not published yet.
  bool IsWanted(uint64_t id, int64_t n) const;
  // The owner's state at a wanted point n with its first n KV rows.
  void Publish(uint64_t id, int64_t n, KvPtr kv, RecurrentPtr state);

  // The published point a waiter waits for, if it has come. kReady and
  // kGone end the wait (the waiter is no longer counted); kPending does not.
  SharedState Take(const SharedWait& wait, KvPtr* kv, RecurrentPtr* state);
  // A waiter that stops waiting without taking its point.
  void Abandon(const SharedWait& wait);

  int64_t size() const { return static_cast<int64_t>(records_.size()); }

 private:
  struct Point {
    int64_t n = 0;
    KvPtr kv;             // null until published
    RecurrentPtr state;
    int64_t waiters = 0;
  };
  struct Record {
    Tokens tokens;
    int64_t progress_tokens = 0;
    bool ended = false;         // out of the tree; kept while waiters remain
    std::vector<int64_t> planned;  // its own captures, ascending
    std::vector<Point> wanted;  // ascending n
  };
  Point* FindPoint(uint64_t id, int64_t n);
  void Unwait(uint64_t id, Point* p);
  PrefixTree tree_;
  std::unordered_map<uint64_t, Record> records_;
  uint64_t next_id_ = 1;
};

}  // namespace lineage::cache
