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

TEST(BudgetEviction, ProvenAnchorsHoldOnlyTheirShareOfATightBudget) {
  // Every session restores from its anchor once, so every anchor is proven;
  // protected without bound they would fill the budget and push out the
  // conversation that goes on between the sessions.
  CacheOptions o;
  o.ram_budget_bytes = 48 * 1024;
  Harness h(o, kShape);
  TokenSource src;
  Tokens conversation = src.Fresh(600);
  h.Run(conversation);
  for (int i = 0; i < 8; ++i) {
    const Tokens sys = src.Fresh(400);
    h.Run(Cat({sys, src.Fresh(10)}), {400, 0});
    ASSERT_EQ(h.Run(Cat({sys, src.Fresh(12)}), {400, 0}).restore.length, 400) << "session " << i;
    conversation = Cat({conversation, src.Fresh(5)});
    EXPECT_EQ(h.Run(conversation).restore.length, Len(conversation) - 5) << "session " << i;
    EXPECT_LE(h.cache().Stats().ram_bytes, o.ram_budget_bytes);
  }
  EXPECT_GT(h.cache().Stats().evictions, 0);
}

}  // namespace
}  // namespace lineage::cache::testing
