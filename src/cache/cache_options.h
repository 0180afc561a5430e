// Every threshold of the lineage cache policy, with the defaults of
// DESIGN.md §3 and issue 4. Plain values; copied into a LineageCache at
// construction.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lineage::cache {

// A boundary found by comparing token sequences (the end of the shared
// system + tools prefix, the point a prompt leaves a stored sibling) moves by
// a token or two when BPE merges differently across it in the next prompt.
// Restore points placed at such a boundary sit this many tokens before it.
inline constexpr int64_t kBoundarySlackTokens = 2;
// The restore point for a boundary after `shared_tokens` equal tokens.
inline int64_t BeforeBoundary(int64_t shared_tokens) {
  return std::max<int64_t>(0, shared_tokens - kBoundarySlackTokens);
}

// kLineage is the design of §3; kExact is the previous behaviour kept behind
// the off switch (§3.5, last point): two whole snapshots per request at
// m - guard_tokens and m, no checkpoints, no absorption, no anchors, a small
// LRU of whole snapshots whose KV is charged as private copies.
enum class CacheMode : uint8_t { kLineage, kExact };

// Which checkpoint thinning drops first when an entry has too many (§3.4).
enum class ThinOrder : uint8_t {
  kSeed,    // all guards but the newest, oldest first; then the oldest points
  kSpread,  // a near-duplicate first, then the point whose removal leaves
            // the smallest gap (0, other points, entry end); the default:
            // measured ahead of kSeed on mixed and mooncake traffic at every
            // budget (docs/sim.md, thinning.h)
};
// How many checkpoints an entry may keep.
enum class ThinCount : uint8_t {
  kFixed,  // max_checkpoints
  kBytes,  // max(max_checkpoints, checkpoint_kv_fraction * entry KV bytes / blob bytes)
};

struct CacheOptions {
  CacheMode mode = CacheMode::kLineage;
  // False for attention-only layouts: any prefix of an entry restores (§3.1).
  bool recurrent = true;

  // RAM budget (§3.5): every distinct KV page once + every recurrent blob.
  // The default is the seed's; a server sizes it with MachineRamBudgetBytes().
  int64_t ram_budget_bytes = int64_t{48} << 30;
  int64_t max_anchor_entries = 16;
  int64_t max_anchor_bytes = int64_t{16} << 30;

  // Capture points (§3.2).
  int64_t guard_tokens = 16;            // guard at m - guard_tokens ...
  int64_t guard_min_suffix_tokens = 256;  // ... only when m - r >= this
  int64_t divergence_min_gain_tokens = 256;
  int64_t periodic_tokens = 0;          // K; 0 = no periodic checkpoints
  bool capture_anchor = true;
  // Also anchor at the end of the system text when the template renders it
  // before the tools (LookupHints::system_end_tokens): sessions and
  // sub-agents with another tool list share it.
  bool capture_system_end = true;
  // Rungs inside a new anchor: states at absolute multiples of
  // RungSpacing (capture_plan.h) below the anchor, captured with it and kept
  // with it, so that a sub-agent whose tool list leaves the parent's inside
  // the tools restores close to where it leaves.
  bool anchor_rungs = true;
  bool capture_history_end = true;
  // Structural points for prompts without hints (no anchor, no history
  // end): the last block boundary below the prompt end and boundaries
  // 1, 3, 7, 15 ... blocks below it (StructuralPoints), kept only where a point covers
  // at least max(divergence_min_gain_tokens, state_bytes /
  // kv_bytes_per_token) tokens more than the next lower one: a state is
  // worth its bytes when it saves recomputing at least as many tokens as
  // the KV its bytes would hold. The same rate decides whether such a
  // prompt gets a guard and keeps its prompt end after generation. 0 = off.
  int64_t structural_block_tokens = 512;
  // One recurrent state's bytes and one token's KV bytes (0 = unknown): the
  // exchange rate of the rule above.
  int64_t state_bytes = 0;
  int64_t kv_bytes_per_token = 0;

  // In-flight sharing: a request whose prefix another request is prefilling
  // waits for that request's capture there instead of computing it again.
  bool share_in_flight = true;

  // Absorb a stored entry whose rendered history (up to its history-end
  // checkpoint) the new prompt repeats, not only one that is a whole prefix:
  // with thinking templates the next prompt never repeats the previous
  // prompt's generation prompt, so without this no such entry is absorbed.
  bool absorb_past_history_end = true;

  // Thinning (§3.4).
  int64_t max_checkpoints = 4;
  ThinOrder thin_order = ThinOrder::kSpread;
  ThinCount thin_count = ThinCount::kFixed;
  double checkpoint_kv_fraction = 0.25;  // for ThinCount::kBytes

  // kExact only: at most this many whole snapshots in RAM.
  int64_t exact_max_entries = 8;
};

// Whether requests register their prefills for in-flight sharing: recurrent
// lineage layouts only (an attention-only layout restores any prefix of a
// stored entry; the previous design shared nothing).
inline bool SharesInFlight(const CacheOptions& o) {
  return o.share_in_flight && o.recurrent && o.mode == CacheMode::kLineage;
}

// A RAM budget scaled to this machine: `fraction` of physical memory (the
// weights and the live sequences need the rest). 0 if the size is unknown.
int64_t MachineRamBudgetBytes(double fraction = 0.4);

}  // namespace lineage::cache
