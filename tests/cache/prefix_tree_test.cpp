// PrefixTree against a plain list of sequences: random inserts, checkpoints
// and removals over a small alphabet (so sequences share prefixes and split
// edges everywhere), then Walk compared with a direct scan, and the tree back
// to its root alone once everything is removed.
#include "cache/prefix_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace lineage::cache {
namespace {

int64_t Lcp(const Tokens& a, const Tokens& b) {
  const size_t n = std::min(a.size(), b.size());
  return std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin();
}

TEST(PrefixTree, WalkMatchesADirectScanThroughInsertsAndRemovals) {
  std::mt19937 rng(7);
  auto rand_seq = [&](size_t len) {
    Tokens t(len);
    for (auto& x : t) x = static_cast<TokenId>(rng() % 3);
    return t;
  };
  PrefixTree tree;
  std::map<EntryId, Tokens> live;
  std::map<EntryId, std::vector<int64_t>> points;
  EntryId next = 1;
  for (int step = 0; step < 3000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      Tokens t = live.empty() || rng() % 2 ? rand_seq(1 + rng() % 40) : live.begin()->second;
      if (rng() % 2 && !t.empty()) t.resize(1 + rng() % t.size());  // prefixes of others too
      const EntryId id = next++;
      tree.Insert(t, id);
      live[id] = t;
      for (int k = 0; k < 2; ++k) {
        const int64_t n = 1 + static_cast<int64_t>(rng() % t.size());
        tree.AddPoint(t, id, n, PointKind::kGuard);
        points[id].push_back(n);
      }
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      tree.Remove(it->second, it->first);
      points.erase(it->first);
      live.erase(it);
    }
    const Tokens probe = rand_seq(1 + rng() % 45);
    std::multiset<std::pair<EntryId, int64_t>> want, got;
    int64_t want_shared = 0;
    for (const auto& [id, t] : live) {
      const int64_t l = Lcp(probe, t);
      want_shared = std::max(want_shared, l);
      if (l == static_cast<int64_t>(t.size())) want.insert({id, l});
      for (int64_t n : points[id]) {
        if (n <= l) want.insert({id, n});
      }
    }
    const int64_t shared = tree.Walk(probe, 1 << 20, [&](const TreePoint& p) { got.insert({p.entry, p.n}); });
    ASSERT_EQ(shared, want_shared) << "step " << step;
    ASSERT_EQ(got, want) << "step " << step;
    std::set<EntryId> sharing;
    tree.EntriesSharing(probe, shared, [&](EntryId id) {
      sharing.insert(id);
      return true;
    });
    for (const auto& [id, t] : live) {
      ASSERT_EQ(sharing.count(id) == 1, shared > 0 && Lcp(probe, t) == shared) << "step " << step;
    }
  }
  for (const auto& [id, t] : live) tree.Remove(t, id);
  EXPECT_EQ(tree.num_nodes(), 1) << "removal prunes and merges back to the root";
}

}  // namespace
}  // namespace lineage::cache
