// LinkLineages against its definition computed pair by pair.
#include "cache/lineage_map.h"

#include <gtest/gtest.h>

#include <random>

namespace lineage::cache {
namespace {

int64_t Lcp(const Tokens& a, const Tokens& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

std::vector<LineageLink> Naive(const std::vector<Tokens>& seqs) {
  std::vector<LineageLink> out(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) {
    for (size_t j = 0; j < seqs.size(); ++j) {
      if (j == i) continue;
      const int64_t l = Lcp(seqs[i], seqs[j]);
      if (l == static_cast<int64_t>(seqs[i].size())) ++out[i].extended_by;
      if (j < i && l > out[i].shared_tokens) out[i] = {static_cast<int>(j), l, out[i].extended_by};
    }
  }
  return out;
}

std::vector<LineageLink> Link(const std::vector<Tokens>& seqs) {
  std::vector<TokenSpan> spans(seqs.begin(), seqs.end());
  return LinkLineages(spans);
}

TEST(LineageMap, ConversationsHangUnderTheirAnchorAndBranchesUnderWhatTheyLeft) {
  Tokens anchor = {1, 2, 3, 4};
  Tokens a = {1, 2, 3, 4, 5, 6, 7, 8};
  Tokens a_regen = {1, 2, 3, 4, 5, 6, 9};
  Tokens b = {1, 2, 3, 4, 10, 11};
  Tokens sub = {1, 2, 20};
  Tokens other = {30, 31};
  auto links = Link({anchor, a, a_regen, b, sub, other});
  EXPECT_EQ(links[0].parent, -1);
  EXPECT_EQ(links[0].extended_by, 3);  // a, a_regen and b restore the anchor
  EXPECT_EQ(links[1].parent, 0);
  EXPECT_EQ(links[1].shared_tokens, 4);
  EXPECT_EQ(links[2].parent, 1);
  EXPECT_EQ(links[2].shared_tokens, 6);
  EXPECT_EQ(links[3].parent, 0);
  EXPECT_EQ(links[4].parent, 0);  // ties go to the earliest
  EXPECT_EQ(links[4].shared_tokens, 2);
  EXPECT_EQ(links[5].parent, -1);
  EXPECT_EQ(links[5].shared_tokens, 0);
}

TEST(LineageMap, MatchesThePairwiseDefinitionOnRandomSequences) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<Tokens> seqs;
    for (int i = 0; i < n; ++i) {
      Tokens t;
      if (!seqs.empty() && rng() % 4 != 0) {  // usually a branch of an earlier one
        const Tokens& base = seqs[rng() % seqs.size()];
        t.assign(base.begin(), base.begin() + static_cast<long>(rng() % (base.size() + 1)));
      }
      const int extra = (t.empty() ? 1 : 0) + static_cast<int>(rng() % 5);  // never empty
      for (int k = 0; k < extra; ++k) t.push_back(static_cast<TokenId>(rng() % 3));
      seqs.push_back(t);
    }
    auto got = Link(seqs);
    auto want = Naive(seqs);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(got[i].parent, want[i].parent) << "round " << round << " seq " << i;
      EXPECT_EQ(got[i].shared_tokens, want[i].shared_tokens) << "round " << round << " seq " << i;
      EXPECT_EQ(got[i].extended_by, want[i].extended_by) << "round " << round << " seq " << i;
    }
  }
}

}  // namespace
}  // namespace lineage::cache
