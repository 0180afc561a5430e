// The per-request record of every cache decision (issue 4, "every decision can
// be explained"): which restore point was chosen and why, which capture points
// were planned, and at commit what was absorbed, thinned, evicted or pinned.
// Plain values; ToString() gives one log-friendly line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_types.h"

namespace lineage::cache {

// A restore point without its payload: what a log line or a test needs.
struct PointRef {
  EntryId entry = kNoEntry;  // kNoEntry: cold start, length 0
  int64_t length = 0;
  PointKind kind = PointKind::kEntryEnd;
  Tier tier = Tier::kNone;
  bool anchor = false;  // the entry is a pinned anchor
};

struct PlannedCapture {
  int64_t n = 0;
  PointKind kind = PointKind::kGuard;
  bool operator==(const PlannedCapture&) const = default;
};

struct LookupExplanation {
  PointRef chosen;
  // The longest restore point RAM offered (equal to `chosen` unless disk won).
  PointRef best_ram;
  bool disk_consulted = false;
  std::vector<PlannedCapture> planned;
  // The stored sequence sharing the most leading tokens with the prompt, and
  // how many it shares: why a request missed is visible here.
  EntryId closest_entry = kNoEntry;
  int64_t closest_shared_tokens = 0;
  int64_t prompt_tokens = 0;
  std::string ToString() const;
};

struct ThinnedPoint {
  EntryId entry = kNoEntry;
  int64_t n = 0;
  PointKind kind = PointKind::kFinal;
};

struct EvictedEntry {
  EntryId entry = kNoEntry;
  int64_t num_tokens = 0;
  bool anchor = false;
  Tier now_in = Tier::kNone;  // kDisk when a disk tier still holds it
};

struct CommitExplanation {
  EntryId entry = kNoEntry;        // the new entry (kNoEntry if not kept)
  EntryId parent = kNoEntry;       // the lease's source entry, if any
  bool parent_was_absorbed = false;  // the parent was gone: a sibling
  std::vector<EntryId> absorbed;
  std::vector<EntryId> anchors_created;
  std::vector<ThinnedPoint> thinned;
  std::vector<EvictedEntry> evicted;
  std::string ToString() const;
};

}  // namespace lineage::cache
