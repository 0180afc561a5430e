// CacheStore: the state behind LineageCache (private to src/cache): the
// entries, their index, their byte ledgers, the leases, and the operations
// that keep the three consistent (add, take, evict, enforce budgets).
//
// Invariants: an entry is in `entries` iff it is in `tree` iff it is charged
// to `ram` (and to `anchor_ledger` iff it is an anchor). Checkpoints are
// ascending, distinct, each n < the entry's length.
// Thread-safety: none; LineageCache holds its mutex around every call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <set>
#include <utility>
#include <unordered_map>
#include <vector>

#include "cache/byte_ledger.h"
#include "cache/cache_options.h"
#include "cache/disk_tier.h"
#include "cache/explanation.h"
#include "cache/prefix_tree.h"
#include "core/status.h"

namespace lineage::cache {

struct Entry {
  EntryId id = kNoEntry;
  Tokens tokens;
  KvPtr kv;                              // rows [0, tokens.size())
  RecurrentPtr state;                    // at tokens.size()
  std::vector<Checkpoint> checkpoints;   // ascending, distinct n < tokens.size()
  bool anchor = false;
  bool hintless = false;  // committed without hints (CommitRequest::absorb_tails)
  int64_t hits = 0;  // restores served not yet spent on an LRU lap (anchors)
  int64_t leases = 0;
  uint64_t last_used = 0;
  int64_t used_ms = 0;  // wall clock of the last use, for people (the cache page)
  int64_t num_tokens() const { return static_cast<int64_t>(tokens.size()); }
};

struct LeaseRecord {
  EntryId source = kNoEntry;
  Tier tier = Tier::kNone;
  int64_t length = 0;
  PointKind kind = PointKind::kEntryEnd;
  RecurrentPtr state;  // the restored state (absorbing a disk source needs it)
  bool source_anchor = false;
};

struct CacheCounters {
  int64_t peak_ram_bytes = 0;
  int64_t evictions = 0;
  int64_t absorptions = 0;
  int64_t thinned = 0;
  int64_t trimmed = 0;  // entries cut back to a checkpoint under the budget
  int64_t lookups = 0;
  int64_t restored_tokens = 0;
  int64_t disk_restores = 0;
};

class CacheStore {
 public:
  CacheStore(const CacheOptions& options, DiskTier* disk) : o_(options), disk_(disk) {}

  const CacheOptions& options() const { return o_; }
  DiskTier* disk() const { return disk_; }
  PrefixTree& tree() { return tree_; }
  const PrefixTree& tree() const { return tree_; }
  Entry* Find(EntryId id);
  const std::unordered_map<EntryId, Entry>& entries() const { return entries_; }
  uint64_t Touch() { return ++tick_; }
  // Marks a stored entry as just restored from (keeps the LRU order).
  void Use(Entry& entry);
  uint64_t Recency(EntryId id) const;
  EntryId NewId() { return next_id_++; }

  void Add(Entry entry);
  Entry Take(EntryId id);
  // Moves the entry out of RAM over a budget; records it.
  void Evict(EntryId id, CommitExplanation* ex);
  void EnforceBudgets(CommitExplanation* ex);
  void EvictOverBudget(CommitExplanation* ex);
  // Cuts a RAM-only conversation entry back to its newest checkpoint (that
  // checkpoint becomes its end); false when the entry must leave whole.
  bool TrimToCheckpoint(EntryId id);
  // Drops the lowest rung (CacheOptions::anchor_rungs) of the least recently
  // used RAM-only anchor that has any: under a full budget, states kept for a
  // sub-agent that may never come go before anything that served a restore.
  bool DropRung();
  // Whether TrimToCheckpoint may cut the (unleased) entry: a RAM-only
  // conversation entry with a state below its end.
  bool CanTrim(const Entry& e) const;
  // The least recently used unleased entry committed without hints, one
  // TrimToCheckpoint can cut, whose
  // end saves fewer tokens over its newest checkpoint than a state's bytes
  // would hold as KV (CacheOptions::state_bytes / kv_bytes_per_token);
  // kNoEntry if none or the rate is unknown.
  EntryId CheapestTail() const;
  // The unleased entry whose next eviction step loses the least expected
  // benefit per byte (see ValuePerByte), among the oldest of each class;
  // kNoEntry if every entry is leased.
  EntryId LeastValueVictim() const;
  // Restorable tokens per byte freed by the entry's next eviction step.
  double ValuePerByte(const Entry& e) const;
  static constexpr int kEvictionWindow = 16;
  // Sends an anchor that has served restores round the LRU order again,
  // spending one of its restores; false for any other entry.
  bool SpendAnchorLap(EntryId id);
  static constexpr int64_t kMaxAnchorLaps = 3;
  // Sorts, merges equal n and thins an entry's checkpoints (not indexed yet).
  void NormalizeAndThin(Entry& entry, CommitExplanation* ex);
  void PutToDisk(const Entry& entry);

  // The anchor entry whose tokens are exactly prompt[0, n), if any.
  EntryId AnchorAt(TokenSpan prompt, int64_t n) const;
  // A non-anchor entry whose tokens are exactly `tokens`, if any.
  EntryId SameTokens(TokenSpan tokens) const;

  uint64_t NewLease(LeaseRecord rec);
  void ReleaseLease(uint64_t id);
  LeaseRecord TakeLease(uint64_t id);
  LeaseRecord* FindLease(uint64_t id);
  int64_t live_leases() const { return static_cast<int64_t>(leases_.size()); }

  const ByteLedger& ram() const { return ram_; }
  const ByteLedger& anchor_ledger() const { return anchor_ledger_; }
  int64_t num_anchors() const { return num_anchors_; }
  CacheCounters& counters() { return counters_; }
  const CacheCounters& counters() const { return counters_; }

  Status CheckInvariants() const;

 private:
  bool PrivateKv() const { return o_.mode == CacheMode::kExact; }
  void Charge(ByteLedger& ledger, const Entry& e, bool add) const;
  // Eviction classes. Anchors compete on evidence of reuse, not on their
  // kind alone: an anchor nothing has restored from yet (a system prompt
  // with a timestamp in it makes one per request) leaves RAM in LRU order
  // with the conversations; one that has served a restore leaves after them.
  enum Class { kConversation = 0, kUnprovenAnchor = 1, kProvenAnchor = 2 };
  static Class ClassOf(const Entry& e) {
    return !e.anchor ? kConversation : e.hits > 0 ? kProvenAnchor : kUnprovenAnchor;
  }
  // The least recently used entry among `classes` (leased ones only if
  // `allow_leased`); kNoEntry if none.
  EntryId LruVictim(std::initializer_list<Class> classes, bool allow_leased = false) const;

  const CacheOptions& o_;
  DiskTier* disk_;
  std::unordered_map<EntryId, Entry> entries_;
  // (last_used, id) of every entry by Class, oldest first. Eviction takes
  // the first unleased one instead of scanning every entry, which made a
  // long replay quadratic.
  std::set<std::pair<uint64_t, EntryId>> lru_[3];
  std::unordered_map<uint64_t, LeaseRecord> leases_;
  PrefixTree tree_;
  ByteLedger ram_;
  ByteLedger anchor_ledger_;
  int64_t num_anchors_ = 0;
  EntryId next_id_ = 1;
  uint64_t next_lease_ = 1;
  uint64_t tick_ = 0;
  CacheCounters counters_;
};

}  // namespace lineage::cache
