// LineageMap: stored token sequences drawn as a tree for people (the server's
// cache page, docs/cache-page.md). A sequence's parent is the earlier one
// (in the caller's order) it shares the most leading tokens with, so a
// conversation hangs under the anchor it extends, a regenerated or
// sub-agent branch under the sequence it left, and nothing hangs under a
// later sequence. Ties go to the earliest. Pure; no cache state.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/cache_types.h"

namespace lineage::cache {

struct LineageLink {
  int parent = -1;             // index into the input; -1: a root (shares nothing earlier)
  int64_t shared_tokens = 0;   // leading tokens shared with the parent
  int64_t extended_by = 0;     // other sequences that begin with this whole sequence
};

// `sequences` (non-empty) in the order that decides parenthood (for example anchors
// first, then by entry id). O(n log n) comparisons to sort, then O(n^2)
// integer steps at worst.
std::vector<LineageLink> LinkLineages(std::span<const TokenSpan> sequences);

}  // namespace lineage::cache
