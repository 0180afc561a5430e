// LineageCache: the prompt-cache policy of DESIGN.md §3, written once and run
// on two payloads (real engine state in the server, byte counts in the
// simulator).
//
// One entry per conversation lineage: the full snapshot at its latest prompt
// (tokens, KV pages, recurrent state) plus at most a few checkpoints
// (recurrent states at earlier lengths that read their KV from the entry).
// Anchors are pinned entries at the end of a shared system + tools prefix.
//
// A request's life, as the engine drives it:
//   LookupResult lr = cache.Lookup(prompt, hints);
//   admit from lr.restore (share lr.restore.kv, copy lr.restore.state), prefill
//   prompt[r, m) split at lr.captures, copying the recurrent state out at each;
//   cache.Commit({prompt, kv [0,m), state at m, captured, std::move(lr.lease)});
//   decode; cache.ExtendAfterGeneration(entry, prompt + reply, kv, state).
// A request that fails before commit simply drops its Lease.
//
// Invariants:
//  - A restore point's tokens equal the prompt's: restore.kv holds rows
//    [0, r) of a stored sequence S with S[0, r) == prompt[0, r), and
//    restore.state is the state after exactly those tokens. r < m always.
//  - RAM bytes (each distinct KV page once, plus every distinct recurrent
//    blob) never exceed the budget after a call returns: a hard limit.
//  - An entry a Lease pins leaves RAM only when no unpinned entry is left to
//    evict. It may also be absorbed. Either way the restore point the caller
//    holds keeps its own references to the payload, so the request it serves
//    loses nothing; only the cache stops indexing (and charging) it.
//  - Anchors are never absorbed or thinned. Over the budget every unleased
//    entry, anchor or conversation, competes in one order: the least
//    restorable tokens per byte freed, divided by the time since last use,
//    gives way first; an anchor that served restores goes round that order
//    once more per restore (at most 3 banked). docs/cache.md, "Budgets".
// CacheOptions::mode == kExact turns all of this into the previous design
// (whole snapshots at m - 16 and m, a small LRU); docs/cache.md has the rest.
//
// Ownership: the cache holds shared_ptrs to payloads; callers may keep their
// own. The disk tier (optional) is owned by the caller and must outlive the
// cache. A Lease must not outlive its cache.
//
// Thread-safety: every public method may be called from any thread; one
// mutex guards the state. Disk loads run outside it. Nothing waits on another
// request's commit.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/cache_options.h"
#include "cache/cache_types.h"
#include "cache/disk_tier.h"
#include "cache/explanation.h"
#include "cache/in_flight.h"
#include "core/status.h"

namespace lineage::cache {

class LineageCache;

// Pins the RAM entry a restore point came from until Commit or Release (or
// destruction). A point loaded from disk pins nothing: its payload is the
// caller's once Lookup returns. Move-only.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();
  void Release();
  bool valid() const { return cache_ != nullptr; }
  uint64_t id() const { return id_; }

 private:
  friend class LineageCache;
  Lease(LineageCache* cache, uint64_t id) : cache_(cache), id_(id) {}
  LineageCache* cache_ = nullptr;
  uint64_t id_ = 0;
};

// Lengths the server computes from the chat template; 0 = not known.
struct LookupHints {
  // Length of the shared system + tools prefix as the template renders it.
  // The anchor is captured kBoundarySlackTokens before its end (AnchorPoint):
  // the one place that slack is applied, for every caller.
  int64_t anchor_tokens = 0;
  // Where the rendered history ends and the generation prompt begins.
  int64_t history_end_tokens = 0;
  // Where the system text ends when the template renders it before the
  // tools (below anchor_tokens); a second anchor, with the same slack.
  int64_t system_end_tokens = 0;
};

// A request without hints: traffic that says nothing of its structure
// (a Mooncake trace, a client without a chat template). It gets structural
// capture points (capture_plan.h) and absorbs resend tails at commit
// (CommitRequest::absorb_tails).
inline int64_t AnchorPoint(const LookupHints& h) { return h.anchor_tokens > 0 ? BeforeBoundary(h.anchor_tokens) : 0; }
// The system-end anchor: only below the anchor, 0 when none.
inline int64_t SystemEndPoint(const LookupHints& h) {
  const int64_t s = h.system_end_tokens > 0 ? BeforeBoundary(h.system_end_tokens) : 0;
  return s > 0 && s < AnchorPoint(h) ? s : 0;
}
inline bool Hintless(const LookupHints& h) { return AnchorPoint(h) == 0 && h.history_end_tokens == 0; }

struct RestorePoint {
  EntryId entry = kNoEntry;  // kNoEntry: cold start (length 0, null payloads)
  int64_t length = 0;        // r: rows [0, r) are restored
  PointKind kind = PointKind::kEntryEnd;
  Tier tier = Tier::kNone;
  KvPtr kv;                  // rows [0, r), sharing the entry's pages
  RecurrentPtr state;        // at r; null for attention-only layouts
  bool anchor = false;       // the entry is a pinned anchor (its end is the anchor point)
  PointRef ref() const { return {entry, length, kind, tier, anchor}; }
  // The kind as users see it (RestoreKindName).
  const char* KindName() const { return RestoreKindName(kind, anchor); }
};

struct LookupResult {
  RestorePoint restore;
  // Ascending, distinct n, each restore.length < n <= m. Capture the recurrent
  // state after exactly n tokens of prefill, once per n even if two kinds
  // share it, and hand it back at commit.
  std::vector<PlannedCapture> captures;
  LookupExplanation explanation;
  Lease lease;
};

struct CapturedState {
  int64_t n = 0;
  PointKind kind = PointKind::kGuard;
  RecurrentPtr state;  // after exactly prompt[0, n); null if attention-only
};

struct CommitRequest {
  Tokens prompt;              // the whole prompt, m tokens
  KvPtr kv;                   // rows [0, m)
  RecurrentPtr state;         // at m
  std::vector<CapturedState> captured;  // any order; planned captures only
  Lease lease;                // from the Lookup (may be invalid: no lookup)
  // Also absorb a stored entry the prompt leaves at a block boundary
  // (structural_block_tokens) with no whole block of the entry's prompt
  // after it, when all the entry holds past that point is its own end, a
  // guard or a turn boundary: in block-hashed traffic only an exact resend
  // could still use that tail. Set for prompts without hints: in block-shaped traffic
  // a conversation's next prompt never repeats the previous one whole (its
  // last partial block differs), so without this no entry is ever absorbed
  // and every turn keeps its states.
  bool absorb_tails = false;
  // The point the prompt was admitted from (n = 0: cold): the lookup's
  // restore point, or another prefill's capture it waited for. When the
  // prompt leaves the sequence that holds it there (a sibling, not a next
  // turn), the new entry keeps that state too, as a branch point.
  CapturedState restored;
};

struct CommitResult {
  EntryId entry = kNoEntry;   // use for ExtendAfterGeneration
  CommitExplanation explanation;
};

struct CacheStats {
  int64_t entries = 0;        // RAM, anchors included
  int64_t anchors = 0;
  int64_t checkpoints = 0;
  int64_t ram_bytes = 0;      // the budgeted figure
  int64_t ram_budget_bytes = 0;
  int64_t kv_bytes = 0;
  int64_t recurrent_bytes = 0;
  int64_t anchor_bytes = 0;
  int64_t peak_ram_bytes = 0;
  int64_t live_leases = 0;
  int64_t evictions = 0;      // entries that left RAM over the budget
  int64_t absorptions = 0;
  int64_t thinned = 0;
  int64_t trimmed = 0;        // entries cut back to a checkpoint over the budget
  int64_t lookups = 0;
  int64_t restored_tokens = 0;
  int64_t disk_restores = 0;
  DiskStats disk;             // zero when no disk tier is attached
};

class LineageCache {
 public:
  // `disk` may be null (RAM only).
  explicit LineageCache(const CacheOptions& options, DiskTier* disk = nullptr);
  ~LineageCache();
  LineageCache(const LineageCache&) = delete;
  LineageCache& operator=(const LineageCache&) = delete;

  // The best restore point for `prompt` (§3.1), the capture points to take
  // during prefill (§3.2), an explanation, and a lease on the source entry.
  // REQUIRES: prompt non-empty; hints within [0, prompt.size()].
  Result<LookupResult> Lookup(TokenSpan prompt, const LookupHints& hints = {});

  // Turns the sequence at prompt end into an entry: absorbs stored entries it
  // extends, pins captured anchors as their own entries, thins, enforces the
  // budgets, and writes the new entry to the disk tier (§3.3–3.5).
  // REQUIRES: kv->num_tokens() == prompt.size(); state non-null iff recurrent.
  Result<CommitResult> Commit(CommitRequest request);

  // End of generation (§3.3): entry `id` grows to `tokens` (its own tokens
  // followed by the reply tokens whose KV and state the sequence holds); its
  // old end stays as a kFinal checkpoint. NotFound if the entry has left RAM
  // or been absorbed meanwhile (not an error for the caller to act on).
  Result<CommitExplanation> ExtendAfterGeneration(EntryId id, TokenSpan tokens,
                                                  KvPtr kv, RecurrentPtr state);

  CacheStats Stats() const;
  const CacheOptions& options() const { return options_; }

  // In-flight sharing (in_flight.h), driven by RequestDriver: a prefill
  // registers its prompt; a later request whose prefix it is computing may
  // wait for its capture instead of computing the prefix again.
  // FindSharedPrefill marks the point wanted by the owner (nullopt: nothing
  // worth waiting for, or CacheOptions::share_in_flight is off).
  uint64_t RegisterPrefill(TokenSpan prompt, int64_t progress_tokens, std::vector<int64_t> planned = {});
  void EndPrefill(uint64_t id);
  void PrefillProgress(uint64_t id, int64_t progress_tokens);
  std::optional<SharedWait> FindSharedPrefill(uint64_t self, TokenSpan prompt, int64_t restore_tokens);
  std::vector<int64_t> WantedCaptures(uint64_t id, int64_t from_tokens, int64_t to_tokens) const;
  bool IsWantedCapture(uint64_t id, int64_t n) const;
  void PublishCapture(uint64_t id, int64_t n, KvPtr kv, RecurrentPtr state);
  SharedState TakeShared(const SharedWait& wait, KvPtr* kv, RecurrentPtr* state);
  void AbandonShared(const SharedWait& wait);

  // The whole stored sequence of RAM entry `id`: its tokens and KV rows
  // [0, tokens.size()). Chunk reuse (§3.7) reads rows past a restore point.
  // NotFound once the entry has left RAM or been absorbed.
  struct StoredSequence {
    Tokens tokens;
    KvPtr kv;
  };
  Result<StoredSequence> Stored(EntryId id) const;

  // The stored entries' token sequences, checkpoints and bytes (tests, the
  // server's cache page), and a full recount of the budget invariants.
  struct EntryInfo {
    EntryId id = kNoEntry;
    Tokens tokens;
    bool anchor = false;
    uint64_t last_used = 0;  // larger is more recent
    int64_t used_ms = 0;     // wall clock of the last use
    int64_t leases = 0;
    std::vector<Checkpoint> checkpoints;
    int64_t bytes = 0;         // its KV pages and recurrent states
    int64_t shared_bytes = 0;  // of those, pages and states other entries hold too
  };
  std::vector<EntryInfo> Entries() const;
  Status CheckInvariants() const;

 private:
  friend class Lease;
  struct Impl;
  void ReleaseLease(uint64_t lease_id);

  CacheOptions options_;
  DiskTier* disk_;
  mutable std::mutex mu_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lineage::cache
