// Checkpoint thinning (DESIGN.md §3.4): an entry keeps at most a few
// checkpoints. Pure functions over one entry's checkpoint list.
//  - ThinOrder::kSeed: drop guards but the newest (largest n), oldest first;
//    then the oldest (smallest n) remaining points.
//  - ThinOrder::kSpread (default): drop the point whose removal leaves the
//    smallest gap between its neighbours (0, the other points, the entry
//    end), so the survivors stay spread over the sequence: an edit in the
//    middle finds a point near it, and a conversation cut back under the
//    RAM budget loses its tail in steps.
//  - Either order keeps the oldest and the newest history-end points while
//    another can go: the next human turn of a thinking template leaves the
//    conversation at the history end of its turn's first request, however
//    many tool-loop requests came after it, and a resend of the last request
//    restores at the newest.
//  - Either order keeps branch points (Checkpoint::branch) while a point
//    that served only its own lineage can go.
//  - ThinCount::kBytes: the limit grows with the entry's KV bytes, because a
//    recurrent state is small next to a long context's KV.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/cache_options.h"
#include "cache/cache_types.h"

namespace lineage::cache {

int64_t CheckpointLimit(const CacheOptions& options, int64_t entry_kv_bytes, int64_t blob_bytes);

// Which of two checkpoints at one length (or within near_tokens of each
// other) keeps its place, lower first: a turn boundary says the most about
// the lineage; a periodic point the least.
int KeepRank(PointKind kind);

// REQUIRES: `points` ascending by n, every n < entry_tokens. Removes points
// until at most `limit` remain; returns the removed ones in removal order.
// In the spread order a point within near_tokens of another (a guard just
// below a history end) is nearly redundant and goes first, the less telling
// of the two (KeepRank).
std::vector<Checkpoint> ThinCheckpoints(std::vector<Checkpoint>& points, int64_t entry_tokens,
                                        int64_t limit, ThinOrder order, int64_t near_tokens = 0);

}  // namespace lineage::cache
