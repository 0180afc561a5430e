#include "cache/thinning.h"

#include <algorithm>
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

size_t SpreadVictim(const std::vector<Checkpoint>& points, int64_t entry_tokens, int64_t near_tokens) {
  const KeptHistoryEnds keep(points);
  if (keep.Count() == points.size()) return 0;  // the older history end goes, as in the seed's order
  // (not near another point, rank kept, gap), least first.
  std::tuple<bool, int, int64_t> victim_cost{true, 0, INT64_MAX};
  size_t victim = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (keep.Has(i)) continue;
    const int64_t prev = i == 0 ? 0 : points[i - 1].n;
    const int64_t next = i + 1 == points.size() ? entry_tokens : points[i + 1].n;
    const int64_t to_point = std::min(i == 0 ? INT64_MAX : points[i].n - prev,
                                      i + 1 == points.size() ? INT64_MAX : next - points[i].n);
    if (to_point <= near_tokens) {
      const std::tuple<bool, int, int64_t> cost{false, -KeepRank(points[i].kind), to_point};
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
