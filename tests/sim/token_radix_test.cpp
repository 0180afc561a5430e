// TokenRadix's reference-counted sequences (what the oracle, SGLang and
// Marconi hold) against brute force: the distinct token prefixes of the
// sequences held, and the longest prefix any of them shares with a query.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "sim/token_radix.h"

namespace lineage::sim {
namespace {

std::vector<uint32_t> RandomSeq(std::mt19937_64& rng) {
  std::vector<uint32_t> s;
  const int n = 1 + static_cast<int>(rng() % 12);
  for (int i = 0; i < n; ++i) s.push_back(static_cast<uint32_t>(rng() % 3));
  return s;
}

int64_t DistinctPrefixTokens(const std::vector<std::vector<uint32_t>>& seqs) {
  std::set<std::vector<uint32_t>> prefixes;
  for (const auto& s : seqs)
    for (size_t n = 1; n <= s.size(); ++n) prefixes.insert(std::vector<uint32_t>(s.begin(), s.begin() + static_cast<long>(n)));
  return static_cast<int64_t>(prefixes.size());
}

int64_t CommonPrefix(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

TEST(TokenRadix, HeldSequencesMatchBruteForceAndReleaseFrees) {
  std::mt19937_64 rng(11);
  TokenRadix tree;
  std::vector<std::vector<uint32_t>> live;
  std::vector<TokenRadix::NodeId> handles;
  for (int step = 0; step < 3000; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t k = rng() % live.size();
      tree.Release(handles[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      handles.erase(handles.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      live.push_back(RandomSeq(rng));
      handles.push_back(tree.Hold(live.back()));
    }
    ASSERT_EQ(tree.live_tokens(), DistinctPrefixTokens(live)) << "step " << step;
    const auto q = RandomSeq(rng);
    int64_t best = 0;
    for (const auto& s : live) best = std::max(best, CommonPrefix(q, s));
    ASSERT_EQ(tree.Longest(q), best) << "step " << step;
  }
  for (TokenRadix::NodeId h : handles) tree.Release(h);
  EXPECT_EQ(tree.live_tokens(), 0);
}

}  // namespace
}  // namespace lineage::sim
