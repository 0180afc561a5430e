// Capture points (DESIGN.md §3.2): where the engine copies the recurrent
// state out during prefill. Chosen at lookup from the restore point and the
// closest stored sequence; a pure function of its inputs.
//  - anchor at a when r < a <= m and no anchor exists for prompt[0, a):
//    wherever it falls, also after the guard (the seed's 426-token case);
//    the same at the system-end anchor s (system text before the tools)
//    when it is worth a state (s >= divergence_min_gain_tokens);
//  - divergence at d = BeforeBoundary(tokens shared with the closest stored
//    sequence), the anchor's slack rule, when the prompt leaves that
//    sequence before m and d - r >= divergence_min_gain_tokens;
//  - history end at h when r < h < m;
//  - guard at m - guard_tokens when m - r >= guard_min_suffix_tokens (for
//    prompts without hints, only a state's worth of tokens, StructuralSpacing,
//    above the highest structural point);
//  - periodic every periodic_tokens (absolute multiples) in (r, m), if on;
//  - structural, for prompts with no hints: block boundaries below m at
//    distances that double (StructuralPoints), as kPeriodic points: where
//    a Mooncake-style block cache would share, and densest near the end,
//    where different questions over one document part.
// kExact plans only its whole snapshot at m - guard_tokens. Attention-only
// layouts plan only anchors (any prefix restores; the anchor pins one).
// Two kinds at one n keep the first of: anchor, divergence, history end,
// guard, periodic.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/cache_options.h"
#include "cache/explanation.h"

namespace lineage::cache {

struct PlanInputs {
  int64_t prompt_tokens = 0;          // m
  int64_t restore_tokens = 0;         // r
  int64_t closest_shared_tokens = 0;  // d
  int64_t anchor_tokens = 0;          // a; 0 = none
  bool anchor_exists = false;
  int64_t system_end_tokens = 0;      // s < a; 0 = none
  bool system_end_exists = false;
  int64_t history_end_tokens = 0;     // h; 0 = none
  bool structural = false;            // no hints: plan structural points
};

// The fewest tokens a recurrent state must save over the next lower restore
// point to be worth its bytes: max(divergence_min_gain_tokens,
// state_bytes / kv_bytes_per_token), the KV its bytes would hold.
int64_t StructuralSpacing(const CacheOptions& options);
// The spacing of an anchor's rungs (CacheOptions::anchor_rungs): the
// smallest power of two at least StructuralSpacing, so that each rung is
// worth its bytes by the same rate and rungs of different anchors coincide.
int64_t RungSpacing(const CacheOptions& options);

// The structural points of a prompt of m tokens restored at r: with block B
// and top = the last block boundary below m, the boundaries top, top - B,
// top - 3B, top - 7B ... (distances that double), from the top down, each
// kept when it lies at least StructuralSpacing below the last kept one (top
// always; top - B too when r = 0) and at least min_gain above r. Ascending.
std::vector<int64_t> StructuralPoints(int64_t m, int64_t r, const CacheOptions& options);

// Ascending, distinct n, each r < n <= m.
std::vector<PlannedCapture> PlanCaptures(const PlanInputs& in, const CacheOptions& options);

}  // namespace lineage::cache
