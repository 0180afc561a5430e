// The chunk matcher of cache reuse (cache/chunk_match.h) against a naive
// version written from the definition, against the properties its result must
// have, and against the simulator's llama-server baseline, on random token
// sequences with deletions, insertions and repeats.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cache/chunk_match.h"
#include "cache/chunk_match_naive.h"
#include "cache_harness.h"
#include "sim/policies/llama_server.h"
#include "sim/shapes.h"

namespace lineage::cache {
namespace {

// A stored sequence and a prompt edited from it: middle ranges deleted, new
// text inserted, a few runs repeated, over a small alphabet so that short
// accidental matches are common.
void RandomPair(std::mt19937& rng, Tokens* cached, Tokens* prompt) {
  const int alphabet = 2 + static_cast<int>(rng() % 6);
  const int64_t n = 1 + rng() % 300;
  cached->clear();
  for (int64_t i = 0; i < n; ++i) cached->push_back(static_cast<TokenId>(rng() % alphabet));
  prompt->clear();
  for (int64_t i = 0; i < n;) {
    const int64_t len = 1 + rng() % 40;
    switch (rng() % 5) {
      case 0:  // deleted
        break;
      case 1:  // inserted before
        for (int k = 0; k < static_cast<int>(rng() % 10); ++k) prompt->push_back(static_cast<TokenId>(rng() % alphabet));
        [[fallthrough]];
      default:
        prompt->insert(prompt->end(), cached->begin() + i, cached->begin() + std::min(n, i + len));
    }
    i += len;
  }
}

void CheckProperties(const Tokens& prompt, const Tokens& cached, int64_t min_run, const std::vector<ReusedChunk>& got) {
  int64_t dst = 0, src_end = 0;
  for (const ReusedChunk& c : got) {
    ASSERT_EQ(c.dst, dst);  // the chunks tile the prompt tail from its start
    ASSERT_GE(c.src, src_end);
    ASSERT_GE(c.len, min_run);
    ASSERT_TRUE(std::equal(prompt.begin() + c.dst, prompt.begin() + c.dst + c.len, cached.begin() + c.src));
    // Maximal: the run stops at an end or at a difference.
    const auto pe = static_cast<size_t>(c.dst + c.len), ce = static_cast<size_t>(c.src + c.len);
    ASSERT_TRUE(pe == prompt.size() || ce == cached.size() || prompt[pe] != cached[ce]);
    dst += c.len;
    src_end = c.src + c.len;
  }
}

TEST(ChunkMatch, EqualsTheNaiveVersionOnRandomEdits) {
  std::mt19937 rng(12345);
  Tokens cached, prompt;
  int64_t nonempty = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    RandomPair(rng, &cached, &prompt);
    const int64_t min_run = static_cast<int64_t>(rng() % 12) - 1;
    const std::vector<ReusedChunk> got = MatchTokenChunks(prompt, cached, min_run);
    ASSERT_EQ(got, testing::NaiveChunks(prompt, cached, min_run)) << "iteration " << iter;
    CheckProperties(prompt, cached, min_run, got);
    nonempty += !got.empty();
  }
  EXPECT_GT(nonempty, 1000);  // the cases exercise reuse, not just misses
}

TEST(ChunkMatch, ADeletedMiddleMessageLeavesTheTailToReuse) {
  // cached: A D B, prompt tail after the common prefix A: B E.
  const Tokens cached = {10, 11, 12, 13, 14, 1, 2, 3, 4, 5, 6, 7, 8};
  const Tokens prompt = {1, 2, 3, 4, 5, 6, 7, 8, 20, 21};
  EXPECT_EQ(MatchTokenChunks(prompt, cached, 8), (std::vector<ReusedChunk>{{5, 0, 8}}));
  EXPECT_TRUE(MatchTokenChunks(prompt, cached, 9).empty());
  EXPECT_TRUE(MatchTokenChunks(prompt, cached, 0).empty());  // off
}

TEST(ChunkMatch, CapShortensTheLastKeptChunk) {
  std::vector<ReusedChunk> c = {{0, 0, 5}, {9, 5, 4}, {20, 9, 6}};
  CapChunks(c, 7);
  EXPECT_EQ(c, (std::vector<ReusedChunk>{{0, 0, 5}, {9, 5, 2}}));
  EXPECT_EQ(ChunkElements(c), 7);
  CapChunks(c, 100);
  EXPECT_EQ(ChunkElements(c), 7);
  CapChunks(c, 0);
  EXPECT_TRUE(c.empty());
}

// The simulator's llama-server baseline on one-token segments: its restore
// is the common prefix plus the reused chunks, at most m - 1 in all.
TEST(ChunkMatch, AgreesWithTheSimulatorsLlamaServerBaseline) {
  sim::ModelShape shape = sim::FindShape("qwen3-0.6b").value();
  ASSERT_TRUE(shape.attention_only());
  std::mt19937 rng(777);
  Tokens cached, prompt;
  int64_t compared = 0, with_reuse = 0;
  for (int iter = 0; iter < 300; ++iter) {
    RandomPair(rng, &cached, &prompt);
    if (prompt.empty()) continue;
    const int64_t min_run = 1 + rng() % 10;
    sim::LlamaServerPolicy policy(shape, {shape.ram_budget_bytes, shape.disk_budget_bytes});
    policy.cache_reuse_tokens = min_run;
    auto request = [](const Tokens& t) {
      sim::Request r;
      for (TokenId id : t) r.prompt.push_back({static_cast<uint64_t>(id) + 1, 1, sim::Role::kUser});
      r.num_prompt_tokens = static_cast<int64_t>(t.size());
      return r;
    };
    const sim::Request first = request(cached), second = request(prompt);
    policy.Admit({0, &first}, 0);
    policy.Commit({0, &first}, 1);
    policy.Finish({0, &first}, 2);
    const int64_t got = policy.Admit({1, &second}, 3).restore_tokens;

    const auto m = static_cast<int64_t>(prompt.size());
    const int64_t lcp =
        std::mismatch(prompt.begin(), prompt.begin() + std::min(prompt.size(), cached.size()), cached.begin()).first -
        prompt.begin();
    const int64_t restore = std::min(lcp, m - 1);
    std::vector<ReusedChunk> chunks = MatchTokenChunks(TokenSpan(prompt).subspan(lcp), TokenSpan(cached).subspan(lcp), min_run);
    CapChunks(chunks, m - 1 - restore);
    // The baseline only takes a slot by similarity above 10% of the prompt.
    if (static_cast<double>(lcp) / static_cast<double>(m) <= 0.1) continue;
    ASSERT_EQ(got, restore + ChunkElements(chunks)) << "iteration " << iter;
    ++compared;
    with_reuse += !chunks.empty();
  }
  EXPECT_GT(compared, 100);
  EXPECT_GT(with_reuse, 50);
}

// The source of chunk reuse: a RAM entry's whole stored sequence, past any
// restore point; gone once the entry is absorbed.
TEST(StoredSequence, IsTheWholeEntryUntilItIsAbsorbed) {
  testing::Harness h({}, {.blob_bytes = 0});  // attention-only
  testing::TokenSource src;
  const Tokens a = src.Fresh(150), b = src.Fresh(40);
  const testing::Outcome first = h.Run(a);
  auto stored = h.cache().Stored(first.entry);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->tokens, a);
  EXPECT_EQ(stored->kv->num_tokens(), 150);
  const testing::Outcome second = h.Run(testing::Cat({a, b}));  // extends and absorbs the first
  EXPECT_EQ(h.cache().Stored(first.entry).status().code(), StatusCode::kNotFound);
  auto longer = h.cache().Stored(second.entry);
  ASSERT_TRUE(longer.ok());
  EXPECT_EQ(longer->tokens, testing::Cat({a, b}));
  EXPECT_EQ(h.cache().Stored(kNoEntry).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace lineage::cache
