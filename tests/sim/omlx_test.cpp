#include <gtest/gtest.h>

#include <random>

#include "sim/policies/omlx.h"

namespace lineage::sim {
namespace {

// Block k's hash equal in two sequences iff their tokens agree up to the end
// of block k: checked against expanded token ids.
TEST(Omlx, ChainedBlockHashesNameTokenPrefixes) {
  std::mt19937_64 rng(3);
  const int64_t block = 8;
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<Segment> a, b;
    for (int k = 0; k < 5; ++k) a.push_back({rng() % 3, static_cast<uint32_t>(1 + rng() % 12), Role::kUser});
    b = a;
    if (rng() % 2) b[rng() % b.size()].id = rng() % 3;
    if (rng() % 2) b[rng() % b.size()].num_tokens = static_cast<uint32_t>(1 + rng() % 12);
    auto ha = ChainedBlockHashes(a, block, NumTokens(a));
    auto hb = ChainedBlockHashes(b, block, NumTokens(b));
    EXPECT_EQ(static_cast<int64_t>(ha.size()), NumTokens(a) / block);
    int64_t lcp = Lcp(a, b);
    for (size_t k = 0; k < std::min(ha.size(), hb.size()); ++k)
      ASSERT_EQ(ha[k] == hb[k], static_cast<int64_t>(k + 1) * block <= lcp) << iter << " block " << k;
  }
}

TEST(Omlx, MaxTokensDropsBlocksEndingPastIt) {
  std::vector<Segment> s = {{1, 100}};
  EXPECT_EQ(ChainedBlockHashes(s, 10, 100).size(), 10u);
  EXPECT_EQ(ChainedBlockHashes(s, 10, 99).size(), 9u);
  EXPECT_EQ(ChainedBlockHashes(s, 10, 5).size(), 0u);
}

}  // namespace
}  // namespace lineage::sim
