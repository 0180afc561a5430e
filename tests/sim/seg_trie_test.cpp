#include <gtest/gtest.h>

#include <random>
#include <set>

#include "sim/seg_trie.h"

namespace lineage::sim {
namespace {

std::vector<Segment> RandomSeq(std::mt19937_64& rng) {
  std::vector<Segment> s;
  int n = 1 + static_cast<int>(rng() % 5);
  for (int i = 0; i < n; ++i) s.push_back({rng() % 4, static_cast<uint32_t>(1 + rng() % 3), Role::kUser});
  return s;
}

// Distinct (prefix of segments) count in tokens: the reference for live_tokens.
int64_t DistinctPrefixTokens(const std::vector<std::vector<Segment>>& seqs) {
  std::set<std::vector<std::pair<uint64_t, uint32_t>>> prefixes;
  int64_t tokens = 0;
  for (const auto& s : seqs) {
    std::vector<std::pair<uint64_t, uint32_t>> p;
    for (const Segment& seg : s) {
      p.push_back({seg.id, seg.num_tokens});
      if (prefixes.insert(p).second) tokens += seg.num_tokens;
    }
  }
  return tokens;
}

TEST(SegTrie, LongestMatchesBruteForceAndReleaseFrees) {
  std::mt19937_64 rng(11);
  SegTrie trie;
  std::vector<std::vector<Segment>> live;
  std::vector<SegTrie::NodeId> handles;
  for (int step = 0; step < 2000; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      size_t k = rng() % live.size();
      trie.Release(handles[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      handles.erase(handles.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      live.push_back(RandomSeq(rng));
      handles.push_back(trie.Insert(live.back()));
    }
    ASSERT_EQ(trie.live_tokens(), DistinctPrefixTokens(live)) << "step " << step;
    auto q = RandomSeq(rng);
    int64_t best = 0;
    for (const auto& s : live) best = std::max(best, Lcp(q, s));
    ASSERT_EQ(trie.Longest(q).tokens, best) << "step " << step;
  }
}

}  // namespace
}  // namespace lineage::sim
