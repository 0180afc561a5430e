// Vocabulary types shared by the cache policy, its tiers and its callers
// (DESIGN.md §1, §3): token ids, entry ids, checkpoint kinds, tiers, and one
// stored recurrent checkpoint.
//
// Thread-safety: plain values; a Checkpoint's blob is immutable (payload.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/payload.h"

namespace lineage::cache {

using TokenId = int32_t;
using TokenSpan = std::span<const TokenId>;
using Tokens = std::vector<TokenId>;

// Identifies one entry for the life of the process; 0 means "none". The same
// id names the entry in RAM and on disk.
using EntryId = uint64_t;
inline constexpr EntryId kNoEntry = 0;

// Why a restore point exists. Every kind but kEntryEnd and kPrefix is a
// checkpoint: a recurrent state at an earlier length that reads its KV rows
// from the entry that holds it.
enum class PointKind : uint8_t {
  kEntryEnd,    // the entry's own last state (its whole token sequence)
  kFinal,       // a turn boundary: an absorbed entry's end, or a prompt end
                // left behind by the end-of-generation extension (§3.3)
  kGuard,       // m - 16 of a long-suffix prompt: serves an identical resend
  kAnchor,      // end of the shared system + tools prefix (a pinned entry)
  kDivergence,  // where a prompt left its closest stored sibling
  kHistoryEnd,  // where the rendered history ends and the generation prompt begins
  kPeriodic,    // every K tokens of a long prefill (off by default)
  kPrefix,      // attention-only layouts: any prefix of an entry (KV truncated)
};
const char* PointKindName(PointKind kind);
// A restore point's kind as logs show it: the end of a pinned anchor entry
// (kEntryEnd of an anchor) reads "anchor", as that is what it is.
const char* RestoreKindName(PointKind kind, bool anchor_entry);

enum class Tier : uint8_t { kNone, kRam, kDisk };
const char* TierName(Tier tier);

// A recurrent state at length n inside an entry. KV rows [0, n) are the
// entry's own. `state` is null for attention-only layouts.
struct Checkpoint {
  int64_t n = 0;
  PointKind kind = PointKind::kFinal;
  RecurrentPtr state;
  // A branch point: another lineage restored from this state (each holder
  // keeps the one blob, charged once). Thinning and tail absorption keep
  // branch points while a point that served only its own lineage can go.
  bool branch = false;
};

}  // namespace lineage::cache
