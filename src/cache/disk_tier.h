// DiskTier: the second tier behind the RAM policy (DESIGN.md §3.5). The policy
// calls it; implementations decide how bytes reach storage (the in-memory
// MemoryDiskTier here counts them; a file-backed tier comes later behind the
// same interface).
//
// Contract:
//  - Put(record) stores or replaces the entry named record.id. It may write
//    only what is new since anything already stored (pages shared with a
//    parent are written once), unless record.whole_snapshot asks for a full
//    private copy (the previous design's behaviour). Writing may be
//    asynchronous; Lookup and Load must then see either the old or the new
//    version of an entry, never a mix.
//  - Lookup(prompt, longer_than) returns the longest restore point on disk for
//    the prompt by the rule of §3.1, only if longer than `longer_than`.
//  - Load(entry, length) returns the KV of rows [0, length) and the recurrent
//    state at length for a point Lookup returned. A file that fails its
//    checksum or belongs to another model is reported, never served.
//  - Erase(entry) forgets the entry (absorbed entries: after the absorbing
//    entry's Put).
//  - A byte cap with LRU eviction; anchors are the last candidates, not exempt.
//
// Thread-safety: every method may be called from any thread; implementations
// lock internally. The policy calls Load without holding its own mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cache/cache_types.h"
#include "core/status.h"

namespace lineage::cache {

struct DiskRecord {
  EntryId id = kNoEntry;
  Tokens tokens;          // the entry's whole token sequence
  KvPtr kv;               // rows [0, tokens.size())
  RecurrentPtr state;     // at tokens.size(); null for attention-only layouts
  std::vector<Checkpoint> checkpoints;  // ascending n, each n < tokens.size()
  bool anchor = false;
  bool whole_snapshot = false;  // write every page, sharing nothing
};

struct DiskPoint {
  EntryId entry = kNoEntry;
  int64_t length = 0;
  PointKind kind = PointKind::kEntryEnd;
  bool anchor = false;
};

struct DiskLoad {
  KvPtr kv;            // rows [0, length)
  RecurrentPtr state;  // at length; null for attention-only layouts
};

struct DiskStats {
  int64_t entries = 0;
  int64_t anchors = 0;
  int64_t bytes = 0;          // currently stored
  int64_t budget_bytes = 0;   // the tier's byte cap
  int64_t bytes_written = 0;  // since construction
  int64_t bytes_read = 0;     // since construction
  int64_t evictions = 0;
};

class DiskTier {
 public:
  virtual ~DiskTier() = default;
  virtual Status Put(const DiskRecord& record) = 0;
  // `recurrent` false: attention-only layouts, any prefix restores.
  virtual std::optional<DiskPoint> Lookup(TokenSpan prompt, int64_t longer_than,
                                          bool recurrent) = 0;
  // Leading tokens `prompt` shares with the closest sequence the tier
  // holds: divergence planning (capture_plan.h) must see sharers that are on
  // disk only. 0 when the tier cannot tell.
  virtual int64_t SharedTokens(TokenSpan prompt) { return 0; }
  virtual Result<DiskLoad> Load(EntryId entry, int64_t length) = 0;
  virtual void Erase(EntryId entry) = 0;
  virtual bool Contains(EntryId entry) = 0;
  virtual DiskStats Stats() = 0;
};

}  // namespace lineage::cache
