// Checkpoint thinning (DESIGN.md §3.4): the seed's order inside a growing
// conversation, and the alternatives as pure functions.
#include "cache/thinning.h"

#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

using K = PointKind;
using Pts = std::vector<std::pair<int64_t, PointKind>>;

TEST(CacheThinning, SeedOrderDropsOldGuardsFirstThenTheOldestBoundaries) {
  CacheOptions seed;
  seed.thin_order = ThinOrder::kSeed;
  Harness h(seed);
  TokenSource src;
  Tokens prompt;
  Outcome o;
  std::vector<Pts> seen;
  for (int turn = 1; turn <= 5; ++turn) {
    prompt = Cat({prompt, src.Fresh(300)});  // every suffix >= 256: every turn has a guard
    o = h.Run(prompt);
    seen.push_back(Points(h.Info(o.entry)));
  }
  // Worked by hand from the rule: turn k adds final (300(k-1)) and guard (300k - 16).
  EXPECT_EQ(seen[0], (Pts{{284, K::kGuard}}));
  EXPECT_EQ(seen[1], (Pts{{284, K::kGuard}, {300, K::kFinal}, {584, K::kGuard}}));
  EXPECT_EQ(seen[2], (Pts{{300, K::kFinal}, {584, K::kGuard}, {600, K::kFinal}, {884, K::kGuard}}));
  EXPECT_EQ(seen[3], (Pts{{300, K::kFinal}, {600, K::kFinal}, {900, K::kFinal}, {1184, K::kGuard}}));
  EXPECT_EQ(seen[4], (Pts{{600, K::kFinal}, {900, K::kFinal}, {1200, K::kFinal}, {1484, K::kGuard}}));
  ASSERT_EQ(o.commit.thinned.size(), 2u);
  EXPECT_EQ(o.commit.thinned[0].n, 1184);
  EXPECT_EQ(o.commit.thinned[1].n, 300);
}

std::vector<Checkpoint> At(std::initializer_list<std::pair<int64_t, PointKind>> pts) {
  std::vector<Checkpoint> out;
  for (auto [n, k] : pts) out.push_back({n, k, nullptr});
  return out;
}

std::vector<int64_t> Lengths(const std::vector<Checkpoint>& cps) {
  std::vector<int64_t> out;
  for (const Checkpoint& c : cps) out.push_back(c.n);
  return out;
}

TEST(CacheThinning, SpreadDropsThePointWhoseRemovalLeavesTheSmallestGap) {
  auto cps = At({{100, K::kFinal}, {110, K::kGuard}, {500, K::kFinal}, {900, K::kFinal}, {1000, K::kGuard}});
  const auto dropped = ThinCheckpoints(cps, 2000, 4, ThinOrder::kSpread);
  // Gaps left: 110 (without 100), 400, 790, 500, 1100 (without 1000: 900 to the end).
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{110, 500, 900, 1000}));
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].n, 100);
  // Down to two: the newest turn boundary (an edited last message) and the
  // newest guard (a resend) stay; the older points go first, then the turn
  // boundary below the newest.
  ThinCheckpoints(cps, 2000, 2, ThinOrder::kSpread);
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{900, 1000}));
}

TEST(CacheThinning, SpreadKeepsTheNewTurnBoundaryOfAGrowingConversation) {
  // A tool loop past its old points: each request leaves a turn boundary
  // just below the entry end. It is the only point near the end, so it
  // stays and an older one goes (dropping the point nearest a neighbour,
  // the end counting as one, kept only the old points and a cut under the
  // budget fell back 58,000 tokens).
  auto cps = At({{10000, K::kFinal}, {20000, K::kFinal}, {30000, K::kFinal}, {33000, K::kFinal}, {91000, K::kFinal}});
  ThinCheckpoints(cps, 91500, 4, ThinOrder::kSpread, 16);
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{10000, 20000, 33000, 91000}));
}

TEST(CacheThinning, OfTwoPointsWithinTheGuardDistanceTheLessTellingGoesFirst) {
  // A turn boundary 3 tokens above a history end, and a guard 11 below it,
  // restore nearly the same prefix; they go before any point that stands
  // alone, however close those are: the turn boundary first (the history
  // end below it serves what it would, but for 3 tokens).
  auto cps = At({{300, K::kFinal}, {600, K::kFinal}, {3381, K::kGuard}, {3392, K::kHistoryEnd}, {3395, K::kFinal},
                 {5000, K::kFinal}});
  ThinCheckpoints(cps, 6000, 5, ThinOrder::kSpread, 16);
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{300, 600, 3381, 3392, 5000}));
  // Then the guard (the only history end is kept).
  ThinCheckpoints(cps, 6000, 4, ThinOrder::kSpread, 16);
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{300, 600, 3392, 5000}));
  // Without the distance the guard stays: the gap it would leave (600 to
  // 3392) is wider than the one 300 leaves.
  auto plain = At({{300, K::kFinal}, {600, K::kFinal}, {3381, K::kGuard}, {3392, K::kHistoryEnd}, {3395, K::kFinal},
                   {5000, K::kFinal}});
  ThinCheckpoints(plain, 6000, 5, ThinOrder::kSpread);
  EXPECT_EQ(Lengths(plain), (std::vector<int64_t>{600, 3381, 3392, 3395, 5000}));
}

TEST(CacheThinning, SpreadKeepsThePreviousReplysEndAndTheGuardOverThePromptEnd) {
  // A chat after the end of generation: turn boundaries, then the previous
  // reply's end (8381, where an edited last message restores), the prompt's
  // guard (8525, a regenerated reply) and the prompt's own end (8541).
  auto cps = At({{4131, K::kFinal}, {5200, K::kFinal}, {7031, K::kFinal}, {8381, K::kFinal}, {8525, K::kGuard},
                 {8541, K::kFinal}});
  ThinCheckpoints(cps, 9273, 5, ThinOrder::kSpread, 16);
  // The prompt's end goes first: its guard serves all but 16 tokens of it.
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{4131, 5200, 7031, 8381, 8525}));
  // Then the older turn boundaries by the gap rule: the live points stay
  // (the two newest turn boundaries and the guard).
  ThinCheckpoints(cps, 9273, 3, ThinOrder::kSpread, 16);
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{7031, 8381, 8525}));
}

// A branch point (another lineage restored from it) outlives the points
// that served only their own lineage, in either order.
TEST(CacheThinning, BranchPointsGoLast) {
  for (ThinOrder order : {ThinOrder::kSeed, ThinOrder::kSpread}) {
    std::vector<Checkpoint> cps = At({{100, K::kDivergence}, {300, K::kFinal}, {600, K::kFinal}, {900, K::kFinal},
                                      {1200, K::kFinal}, {1484, K::kGuard}});
    cps[0].branch = true;
    ThinCheckpoints(cps, 1500, 4, order);
    ASSERT_EQ(cps.size(), 4u);
    EXPECT_EQ(cps[0].n, 100) << static_cast<int>(order);
  }
  // Only branch points left: the order applies to them.
  std::vector<Checkpoint> all = At({{100, K::kDivergence}, {300, K::kDivergence}});
  for (Checkpoint& c : all) c.branch = true;
  ThinCheckpoints(all, 400, 1, ThinOrder::kSeed);
  EXPECT_EQ(all.size(), 1u);
}

TEST(CacheThinning, SeedOrderKeepsTheNewestGuardOnly) {
  auto cps = At({{10, K::kGuard}, {20, K::kFinal}, {30, K::kGuard}, {40, K::kDivergence}, {50, K::kGuard}});
  ThinCheckpoints(cps, 100, 2, ThinOrder::kSeed);
  EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{40, 50}));
  EXPECT_EQ(cps[1].kind, K::kGuard);
}

TEST(CacheThinning, TheNewestHistoryEndOutlivesTheToolLoopThatFollowsIt) {
  // A turn's first request captured its history end (1000); the tool-loop
  // requests after it each left a turn boundary. The next user turn leaves
  // the conversation at that history end, so it is kept over older points.
  for (ThinOrder order : {ThinOrder::kSeed, ThinOrder::kSpread}) {
    auto cps = At({{400, K::kHistoryEnd}, {1000, K::kHistoryEnd}, {1010, K::kFinal}, {1200, K::kFinal},
                   {1400, K::kFinal}, {1600, K::kFinal}, {1784, K::kGuard}});
    ThinCheckpoints(cps, 1800, 4, order);
    ASSERT_EQ(cps.size(), 4u);
    bool kept = false;
    for (const Checkpoint& c : cps) kept |= c.n == 1000 && c.kind == K::kHistoryEnd;
    EXPECT_TRUE(kept) << "order " << static_cast<int>(order);
  }
}

TEST(CacheThinning, TheTurnsFirstHistoryEndOutlivesTheLoopsOwn) {
  // A thinking template: the turn's first request left its history end at
  // 1000; each tool-loop request after it left its own history end and turn
  // boundary. The next human turn leaves at 1000, a resend of the last
  // request at 1600: both stay, the loop's older points go.
  for (ThinOrder order : {ThinOrder::kSeed, ThinOrder::kSpread}) {
    auto cps = At({{1000, K::kHistoryEnd}, {1005, K::kFinal}, {1200, K::kHistoryEnd}, {1205, K::kFinal},
                   {1400, K::kHistoryEnd}, {1405, K::kFinal}, {1584, K::kGuard}, {1600, K::kHistoryEnd}});
    ThinCheckpoints(cps, 1605, 4, order);
    ASSERT_EQ(cps.size(), 4u);
    EXPECT_EQ(cps.front().n, 1000) << "order " << static_cast<int>(order);
    EXPECT_EQ(cps.back().n, 1600) << "order " << static_cast<int>(order);
    // With room for one point only the newest is left.
    ThinCheckpoints(cps, 1605, 1, order);
    EXPECT_EQ(Lengths(cps), (std::vector<int64_t>{1600})) << "order " << static_cast<int>(order);
  }
}

TEST(CacheThinning, ByDefaultTheNextDeletionInTheMiddleFindsThePreviousOnesPoint) {
  // A coding client that replaces its three oldest tool results by a short
  // placeholder whenever the context is nearly full (the `middle-delete`
  // traffic). The first deletion leaves a divergence point where the
  // results began; the turns after it add a boundary each. The seed's order
  // dropped that oldest point first, so the next deletion (the next three
  // results, right after it) restored nothing; the default keeps the point,
  // alone in its stretch of the sequence, over the crowded newest ones.
  Harness h(EventPointsOnly());
  TokenSource src;
  const Tokens head = src.Fresh(2000);
  const Tokens cleared = src.Fresh(8);
  std::vector<Tokens> results;
  auto prompt = [&] {
    Tokens p = head;
    for (const Tokens& r : results) p = Cat({p, r});
    return p;
  };
  auto turns = [&](int n) {
    for (int i = 0; i < n; ++i) {
      results.push_back(Cat({src.Fresh(50), src.Fresh(500)}));  // a call and its result
      h.Run(prompt());
    }
  };
  turns(16);
  for (int i = 0; i < 3; ++i) results[static_cast<size_t>(i)] = cleared;
  Outcome first = h.Run(prompt());
  turns(6);
  for (int i = 3; i < 6; ++i) results[static_cast<size_t>(i)] = cleared;
  Outcome second = h.Run(prompt());
  EXPECT_GE(second.restore.length, Len(head) - 2) << second.lookup.ToString();
  EXPECT_LT(second.restore.length, Len(head) + 3 * Len(cleared));
}

TEST(CacheThinning, ByteSizedCountGrowsWithTheContext) {
  CacheOptions o;
  o.thin_count = ThinCount::kBytes;
  o.checkpoint_kv_fraction = 0.25;
  EXPECT_EQ(CheckpointLimit(o, 1'000'000, 10'000), 25);
  EXPECT_EQ(CheckpointLimit(o, 10'000, 10'000), 4) << "never below max_checkpoints";
  EXPECT_EQ(CheckpointLimit(o, int64_t{1} << 40, 10'000), 64);
  o.thin_count = ThinCount::kFixed;
  EXPECT_EQ(CheckpointLimit(o, 1'000'000, 10'000), 4);
}

TEST(CacheThinning, ByteSizedCountKeepsMoreTurnBoundaries) {
  CacheOptions o;
  o.thin_count = ThinCount::kBytes;
  const PayloadShape shape{64, 4096, 1024};  // 1024 B of KV per token vs a 1 KB state
  Harness h(o, shape);
  TokenSource src;
  Tokens prompt;
  Outcome last;
  for (int turn = 1; turn <= 8; ++turn) {
    prompt = Cat({prompt, src.Fresh(100)});
    last = h.Run(prompt);
  }
  // 800 tokens: 13 pages of 4 KB; a quarter of that is 13 states: all 7 boundaries stay.
  EXPECT_EQ(Points(h.Info(last.entry)).size(), 7u);
  EXPECT_TRUE(last.commit.thinned.empty());
}

}  // namespace
}  // namespace lineage::cache::testing
