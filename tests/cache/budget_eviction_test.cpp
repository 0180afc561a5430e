// What leaves RAM over the budget (DESIGN.md §3.5): conversations leave from
// their tail one checkpoint at a time, and anchors that have served a
// restore outlast conversations only within their share of the budget.
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

const PayloadShape kShape{64, 1024, 256};  // 64-token pages of 1 KiB, 256-byte states

TEST(BudgetEviction, AConversationOverTheBudgetIsCutBackToItsCheckpointNotDropped) {
  CacheOptions o;
  o.ram_budget_bytes = 33 * 1024;
  Harness h(o, kShape);
  TokenSource src;
  // 1,000 tokens (16 pages) with a history-end checkpoint at 900 and a guard at 984.
  const Tokens a = src.Fresh(1000);
  const Outcome first = h.Run(a, {0, 900});
  ASSERT_NE(first.entry, kNoEntry);
  // An unrelated conversation of the same size puts RAM a little over the budget.
  h.Run(src.Fresh(1000));
  EXPECT_LE(h.cache().Stats().ram_bytes, o.ram_budget_bytes);
  EXPECT_GT(h.cache().Stats().trimmed, 0);
  EXPECT_EQ(h.cache().Stats().evictions, 0) << "cutting the tail made room";
  // The last turn edited: the history still restores, from the cut entry.
  const Outcome edited = h.Run(Cat({Tokens(a.begin(), a.begin() + 900), src.Fresh(50)}), {0, 900});
  EXPECT_EQ(edited.restore.length, 900);
  EXPECT_EQ(edited.restore.entry, first.entry);
}

TEST(BudgetEviction, AnEntryWithNoCheckpointLeftLeavesWhole) {
  CacheOptions o;
  o.ram_budget_bytes = 20 * 1024;
  Harness h(o, kShape);
  TokenSource src;
  const Tokens a = src.Fresh(1000);
  const Outcome first = h.Run(a, {0, 900});
  h.Run(src.Fresh(1000));
  EXPECT_LE(h.cache().Stats().ram_bytes, o.ram_budget_bytes);
  EXPECT_EQ(h.Info(first.entry), nullptr);
  EXPECT_GT(h.cache().Stats().evictions, 0);
}

TEST(BudgetEviction, AnchorsReusedOnceLongAgoGiveWayToAConversationInUse) {
  // Eight system prompts, each reused by one more session and never again,
  // would fill the budget if an anchor that served a restore stayed for
  // good; the conversation that follows would leave RAM before every turn.
  CacheOptions o;
  o.ram_budget_bytes = 48 * 1024;
  Harness h(o, kShape);
  TokenSource src;
  for (int i = 0; i < 8; ++i) {
    const Tokens sys = src.Fresh(400);
    h.Run(Cat({sys, src.Fresh(10)}), {400, 0});
    ASSERT_EQ(h.Run(Cat({sys, src.Fresh(12)}), {400, 0}).restore.length, 400) << "session " << i;
  }
  Tokens conversation = src.Fresh(600);
  h.Run(conversation);
  for (int turn = 0; turn < 4; ++turn) {
    conversation = Cat({conversation, src.Fresh(5)});
    EXPECT_EQ(h.Run(conversation).restore.length, Len(conversation) - 5) << "turn " << turn;
    EXPECT_LE(h.cache().Stats().ram_bytes, o.ram_budget_bytes);
  }
  EXPECT_GT(h.cache().Stats().evictions, 0);
}

TEST(BudgetEviction, AnAnchorGoesRoundOnceMorePerRestoreItServed) {
  CacheOptions o;
  o.ram_budget_bytes = 40 * 1024;
  TokenSource src;
  // How many one-off conversations an anchor outlasts, by restores served.
  auto outlasts = [&](int restores) {
    Harness h(o, kShape);
    const Tokens sys = src.Fresh(400);
    const EntryId anchor = h.Run(Cat({sys, src.Fresh(10)}), {400, 0}).commit.anchors_created.at(0);
    for (int i = 0; i < restores; ++i) h.Run(Cat({sys, src.Fresh(12)}), {400, 0});
    int n = 0;
    while (n < 100 && h.Info(anchor) != nullptr) {
      h.Run(src.Fresh(1000));
      ++n;
    }
    return n;
  };
  const int never = outlasts(0), once = outlasts(1), thrice = outlasts(3), often = outlasts(10);
  EXPECT_LT(never, once);
  EXPECT_LT(once, thrice);
  EXPECT_LT(often, 100) << "evidence is spent (at most 3 laps are banked): the anchor leaves in the end";
}

}  // namespace
}  // namespace lineage::cache::testing
