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

// Benefit per byte: an entry without hints whose end saves fewer tokens
// over its newest checkpoint than its state's bytes would hold as KV (a
// block-shaped turn's reply end: its next turn leaves at that checkpoint
// anyway) gives up that end before an older conversation loses anything.
// Returns the lengths of the older hinted entry and the newer hint-less one
// after a third request puts RAM `over_bytes` above the budget (no budget
// when over_bytes < 0).
std::pair<int64_t, int64_t> LengthsAfterAThirdRequest(int64_t over_bytes, int64_t* needed_bytes) {
  const PayloadShape shape{64, 1024, 8192};  // 16 bytes of KV a token, a state worth 512 tokens
  CacheOptions o;
  o.state_bytes = shape.blob_bytes;
  o.kv_bytes_per_token = shape.page_bytes / shape.page_tokens;
  if (over_bytes >= 0) o.ram_budget_bytes = *needed_bytes - over_bytes;
  Harness h(o, shape);
  TokenSource src;
  Outcome hinted = h.Run(src.Fresh(1200), {0, 1190});  // history end 1,190, guard 1,184
  EXPECT_TRUE(h.Extend(hinted, src.Fresh(50)).ok());
  Outcome bare = h.Run(src.Fresh(1200));  // structural points 512 and 1,024
  EXPECT_TRUE(h.Extend(bare, src.Fresh(50)).ok());
  h.Run(src.Fresh(300));
  if (over_bytes < 0) *needed_bytes = h.cache().Stats().ram_bytes;
  auto length = [&](EntryId id) {
    const LineageCache::EntryInfo* e = h.Info(id);
    return e ? Len(e->tokens) : 0;
  };
  return {length(hinted.entry), length(bare.entry)};
}

TEST(BudgetEviction, AShortTailWithoutHintsGoesBeforeAnOlderConversation) {
  int64_t needed = 0;
  EXPECT_EQ(LengthsAfterAThirdRequest(-1, &needed), (std::pair<int64_t, int64_t>{1250, 1250}));
  // 10 KiB over: cutting the hint-less entry back to 1,024 frees a state
  // and four pages; the older conversation stays whole.
  EXPECT_EQ(LengthsAfterAThirdRequest(10 * 1024, &needed), (std::pair<int64_t, int64_t>{1250, 1024}));
}

// Expected benefit per byte over time since use: a long conversation saves
// nearly a token per token of KV it holds, a short one's state costs more
// bytes than its tokens save. Returns how much of the long conversation's
// next turn restores after `short_ones` one-off short conversations have
// passed through a budget that holds it and four of them.
int64_t LongTurnRestoredAfter(int short_ones) {
  const PayloadShape shape{64, 1024, 8192};  // 16 bytes of KV a token, a state worth 512 tokens
  CacheOptions o;
  o.state_bytes = shape.blob_bytes;
  o.kv_bytes_per_token = shape.page_bytes / shape.page_tokens;
  o.ram_budget_bytes = 100 * 1024;
  Harness h(o, shape);
  TokenSource src;
  const Tokens conversation = src.Fresh(3000);
  h.Run(conversation, {0, 2990});
  for (int i = 0; i < short_ones; ++i) {
    h.Run(src.Fresh(100));
    EXPECT_LE(h.cache().Stats().ram_bytes, o.ram_budget_bytes);
  }
  return h.Run(Cat({conversation, src.Fresh(20)})).restore.length;
}

TEST(BudgetEviction, ALongConversationOutlivesNewerShortOnesWhoseStatesCostMore) {
  // In LRU order the conversation would leave at the first overflow.
  EXPECT_GE(LongTurnRestoredAfter(8), 2984);
  // Its age still counts: idle long enough, it leaves too.
  EXPECT_LT(LongTurnRestoredAfter(64), 2984);
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
    h.Run(Cat({sys, src.Fresh(10)}), {402, 0});
    ASSERT_EQ(h.Run(Cat({sys, src.Fresh(12)}), {402, 0}).restore.length, 400) << "session " << i;
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
    const EntryId anchor = h.Run(Cat({sys, src.Fresh(10)}), {402, 0}).commit.anchors_created.at(0);
    for (int i = 0; i < restores; ++i) h.Run(Cat({sys, src.Fresh(12)}), {402, 0});
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
