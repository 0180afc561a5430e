#include "cache/thinning.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <tuple>

namespace lineage::cache {

int64_t CheckpointLimit(const CacheOptions& options, int64_t entry_kv_bytes, int64_t blob_bytes) {
  if (options.thin_count == ThinCount::kFixed || blob_bytes <= 0) return options.max_checkpoints;
  // A bound keeps a huge context from carrying an unbounded list.
  constexpr int64_t kMaxByteSizedCheckpoints = 64;
  const auto sized = static_cast<int64_t>(options.checkpoint_kv_fraction *
                                          static_cast<double>(entry_kv_bytes) /
                                          static_cast<double>(blob_bytes));
  return std::clamp(sized, options.max_checkpoints, kMaxByteSizedCheckpoints);
}

int KeepRank(PointKind kind) {
  switch (kind) {
    case PointKind::kFinal: return 0;
    case PointKind::kHistoryEnd: return 1;
    case PointKind::kDivergence: return 2;
    case PointKind::kAnchor: return 3;
    case PointKind::kGuard: return 4;
    default: return 5;
  }
}

namespace {

// The history ends thinning keeps while anything else can go: the oldest,
// where the turn's first request left it (the next human turn of a thinking
// template re-renders the tool loop's replies without their thinking and
// leaves the conversation there), and the newest (a resend of the last
// request). Absorption relabels a history end the next turn has used as a
// turn boundary (LineageCache::Commit), so the oldest is the running turn's.
struct KeptHistoryEnds {
  explicit KeptHistoryEnds(const std::vector<Checkpoint>& points) {
    for (size_t i = 0; i < points.size(); ++i) {
      if (points[i].kind != PointKind::kHistoryEnd) continue;
      if (oldest == kNone) oldest = i;
      newest = i;
    }
  }
  bool Has(size_t i) const { return i == oldest || i == newest; }
  size_t Count() const { return (oldest != kNone) + (newest != kNone && newest != oldest); }
  static constexpr size_t kNone = SIZE_MAX;
  size_t oldest = kNone;
  size_t newest = kNone;
};

// Index of the point the seed's rule drops next.
size_t SeedVictim(const std::vector<Checkpoint>& points) {
  const KeptHistoryEnds keep(points);
  size_t guards = 0;
  for (const Checkpoint& c : points) guards += c.kind == PointKind::kGuard;
  for (size_t i = 0; i < points.size(); ++i) {
    const bool is_guard = points[i].kind == PointKind::kGuard;
    if (!keep.Has(i) && (guards >= 2 ? is_guard : !is_guard)) return i;  // ascending n: the oldest first
  }
  // Only the newest guard and the kept history ends are left: the guard
  // goes, then the older history end.
  for (size_t i = 0; i < points.size(); ++i) {
    if (!keep.Has(i)) return i;
  }
  return 0;
}

// A turn boundary just above a guard or a history end: after the end of
// generation, the prompt's own end sits guard_tokens above the prompt's
// guard. The guard serves a regenerated reply (the same prompt, restored
// below its end); the end only a reply re-rendered differently, which the
// point below serves all but a few tokens of.
bool ShadowedByGuard(const std::vector<Checkpoint>& points, size_t i, int64_t near_tokens) {
  if (points[i].kind != PointKind::kFinal || i == 0 || points[i].n - points[i - 1].n > near_tokens) return false;
  return points[i - 1].kind == PointKind::kGuard || points[i - 1].kind == PointKind::kHistoryEnd;
}

// The live points spread thinning keeps while older ones can go, by level:
//  2: the newest guard (a resend or regenerated reply of the last prompt,
//     the seed's "only the newest guard is a live resend point"; unless a
//     point within near_tokens serves nearly the same prefix) and the
//     newest turn boundary not shadowed by a point just below it (where the
//     last user message begins: an edited last message restores there);
//  1: the turn boundary below that one (an edit of the message before).
// Without these the gap rule dropped them first, each being the closest to
// its neighbours (the entry's end counts as one): chats with retries lost
// the previous reply on every edit and the guard on every regenerate.
struct LivePoints {
  LivePoints(const std::vector<Checkpoint>& points, int64_t near_tokens) : level(points.size(), 0) {
    // A lineage of prompts without hints keeps its structural points by the
    // gap rule alone (they are where block-shaped next prompts restore).
    for (const Checkpoint& c : points)
      if (c.kind == PointKind::kPeriodic) return;
    size_t guard = SIZE_MAX, newest = SIZE_MAX, below = SIZE_MAX;
    for (size_t i = 0; i < points.size(); ++i) {
      if (points[i].kind == PointKind::kGuard) guard = i;
      if (points[i].kind != PointKind::kFinal || ShadowedByGuard(points, i, near_tokens)) continue;
      below = newest;
      newest = i;
    }
    if (guard != SIZE_MAX) {
      const bool near_below = guard > 0 && points[guard].n - points[guard - 1].n <= near_tokens;
      const bool near_above = guard + 1 < points.size() && points[guard + 1].n - points[guard].n <= near_tokens &&
                              !ShadowedByGuard(points, guard + 1, near_tokens);
      if (near_below || near_above) guard = SIZE_MAX;
    }
    if (below != SIZE_MAX) level[below] = 1;
    for (size_t i : {guard, newest})
      if (i != SIZE_MAX) level[i] = 2;
  }
  std::vector<int> level;
};

size_t SpreadVictim(const std::vector<Checkpoint>& points, int64_t entry_tokens, int64_t near_tokens) {
  const KeptHistoryEnds history(points);
  if (history.Count() == points.size()) return 0;  // the older history end goes, as in the seed's order
  // The victim comes from the least live points there are.
  const LivePoints live(points, near_tokens);
  int lowest = INT_MAX;
  for (size_t i = 0; i < points.size(); ++i)
    if (!history.Has(i)) lowest = std::min(lowest, live.level[i]);
  auto keep = [&](size_t i) { return history.Has(i) || live.level[i] > lowest; };
  // (not near another point, rank kept, gap), least first.
  std::tuple<bool, int, int64_t> victim_cost{true, 0, INT64_MAX};
  size_t victim = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (keep(i)) continue;
    const int64_t prev = i == 0 ? 0 : points[i - 1].n;
    const int64_t next = i + 1 == points.size() ? entry_tokens : points[i + 1].n;
    const int64_t to_point = std::min(i == 0 ? INT64_MAX : points[i].n - prev,
                                      i + 1 == points.size() ? INT64_MAX : next - points[i].n);
    if (to_point <= near_tokens) {
      const int rank = ShadowedByGuard(points, i, near_tokens) ? KeepRank(PointKind::kGuard) + 1 : KeepRank(points[i].kind);
      const std::tuple<bool, int, int64_t> cost{false, -rank, to_point};
      if (cost < victim_cost) victim = i, victim_cost = cost;
      continue;
    }
    // The gap its removal leaves: dropping the point nearest a neighbour
    // instead dropped each new turn boundary of a growing tool loop (its
    // nearest neighbour is the entry end), so the loop kept only its old
    // points and a trim under the budget fell back tens of thousands of
    // tokens (mixed traffic, qwen3.5-0.8b pace, 1G: 60k-token `code`
    // conversations re-prefilled from 33k every request).
    const std::tuple<bool, int, int64_t> cost{true, 0, next - prev};
    if (cost < victim_cost) victim = i, victim_cost = cost;
  }
  return victim;
}

}  // namespace

std::vector<Checkpoint> ThinCheckpoints(std::vector<Checkpoint>& points, int64_t entry_tokens,
                                        int64_t limit, ThinOrder order, int64_t near_tokens) {
  std::vector<Checkpoint> dropped;
  while (static_cast<int64_t>(points.size()) > std::max<int64_t>(limit, 0)) {
    // Branch points go last: the order picks among the other points while
    // there are any.
    std::vector<Checkpoint> own;
    std::vector<size_t> index;
    for (size_t k = 0; k < points.size(); ++k) {
      if (!points[k].branch) {
        own.push_back(points[k]);
        index.push_back(k);
      }
    }
    const bool among_own = !own.empty() && own.size() < points.size();
    const std::vector<Checkpoint>& pick = among_own ? own : points;
    const size_t v = order == ThinOrder::kSeed ? SeedVictim(pick) : SpreadVictim(pick, entry_tokens, near_tokens);
    const size_t i = among_own ? index[v] : v;
    dropped.push_back(points[i]);
    points.erase(points.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return dropped;
}

}  // namespace lineage::cache
