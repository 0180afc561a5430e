// Anchors and divergence checkpoints (DESIGN.md §3.2): new sessions with a
// shared system prompt, the seed's 426-token case, near-identical prompts.
#include "cache/capture_plan.h"
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

using K = PointKind;

bool Plans(const Outcome& o, K kind) {
  for (const PlannedCapture& c : o.captures) {
    if (c.kind == kind) return true;
  }
  return false;
}

TEST(CacheAnchors, NewSessionWithTheSameSystemPromptLandsOnTheAnchor) {
  Harness h;
  TokenSource src;
  const Tokens sys = src.Fresh(2000);
  const LookupHints hints{Len(sys), 0};
  Outcome s1 = h.Run(Cat({sys, src.Fresh(20)}), hints);
  ASSERT_EQ(s1.commit.anchors_created.size(), 1u);
  Outcome s2 = h.Run(Cat({sys, src.Fresh(30)}), hints);
  EXPECT_EQ(s2.restore.length, 1998);
  EXPECT_EQ(s2.restore.entry, s1.commit.anchors_created[0]);
  ASSERT_NE(h.Info(s2.restore.entry), nullptr);
  EXPECT_TRUE(h.Info(s2.restore.entry)->anchor);
  EXPECT_FALSE(Plans(s2, K::kAnchor)) << "one anchor per distinct prefix";
  EXPECT_TRUE(s2.commit.anchors_created.empty());
}

TEST(CacheAnchors, ASessionWithAnotherToolListLandsOnTheSystemEndAnchor) {
  // The template renders the system text, then the tools: a sub-agent with
  // its own tool list shares the system text only.
  Harness h;
  TokenSource src;
  const Tokens system = src.Fresh(1500), tools = src.Fresh(3000), sub_tools = src.Fresh(1200);
  const Tokens main_prefix = Cat({system, tools});
  Outcome s1 = h.Run(Cat({main_prefix, src.Fresh(40)}), {Len(main_prefix), 0, Len(system)});
  ASSERT_EQ(s1.commit.anchors_created.size(), 2u) << "the system end and the system + tools end";
  const Tokens sub_prefix = Cat({system, sub_tools});
  Outcome s2 = h.Run(Cat({sub_prefix, src.Fresh(60)}), {Len(sub_prefix), 0, Len(system)});
  EXPECT_EQ(s2.restore.length, 1498);
  ASSERT_NE(h.Info(s2.restore.entry), nullptr);
  EXPECT_TRUE(h.Info(s2.restore.entry)->anchor);
  EXPECT_EQ(s2.commit.anchors_created.size(), 1u) << "its own system + tools end; the system end exists";
  // Without the hint the first session's anchors are past the shared text,
  // and without rungs inside the anchor nothing restores.
  CacheOptions no_rungs;
  no_rungs.anchor_rungs = false;
  Harness plain(no_rungs);
  plain.Run(Cat({main_prefix, src.Fresh(40)}), {Len(main_prefix), 0});
  EXPECT_EQ(plain.Run(Cat({sub_prefix, src.Fresh(60)}), {Len(sub_prefix), 0}).restore.length, 0);
}

// A sub-agent's tool list leaves the parent's inside the tools (the agent
// drops a tool or two from the middle of the list): the rungs captured with
// the parent's new anchor serve it from the multiple of RungSpacing below.
TEST(CacheAnchors, ASubAgentLeavingInsideTheToolsRestoresFromTheRungBelow) {
  CacheOptions o;
  o.state_bytes = 16 * 1024;             // the harness's state ...
  o.kv_bytes_per_token = 64 * 1024 / 64;  // ... is worth 16 tokens of KV: spacing 256
  ASSERT_EQ(RungSpacing(o), 256);
  Harness h(o);
  TokenSource src;
  const Tokens tools_a = src.Fresh(1300), task_tool = src.Fresh(400), tools_b = src.Fresh(900);
  const Tokens parent = Cat({tools_a, task_tool, tools_b}), child = Cat({tools_a, tools_b});
  Outcome p = h.Run(Cat({parent, src.Fresh(40)}), {Len(parent), 0});
  std::vector<int64_t> rungs;
  for (const PlannedCapture& c : p.captures)
    if (c.kind == K::kPeriodic) rungs.push_back(c.n);
  EXPECT_EQ(rungs, (std::vector<int64_t>{256, 512, 768, 1024, 1280, 1536, 1792, 2048, 2304}));
  // They stay with the anchor entry, not with the conversation.
  ASSERT_EQ(p.commit.anchors_created.size(), 1u);
  EXPECT_EQ(h.Info(p.commit.anchors_created[0])->checkpoints.size(), rungs.size());
  Outcome c = h.Run(Cat({child, src.Fresh(30)}), {Len(child), 0});
  EXPECT_EQ(c.restore.length, 1280);
  EXPECT_EQ(c.restore.entry, p.commit.anchors_created[0]);
  EXPECT_EQ(c.restore.kind, K::kPeriodic);
  // The child's own anchor plans rungs only above what it restored.
  for (const PlannedCapture& x : c.captures) {
    if (x.kind == K::kPeriodic) {
      EXPECT_GT(x.n, 1280);
    }
  }
  // An anchor that exists plans none.
  Outcome again = h.Run(Cat({parent, src.Fresh(50)}), {Len(parent), 0});
  EXPECT_FALSE(Plans(again, K::kPeriodic));
}

// Under a full budget the rungs go before anything that served a restore.
TEST(CacheAnchors, RungsLeaveFirstUnderAFullBudget) {
  CacheOptions o;
  o.state_bytes = 16 * 1024;
  o.kv_bytes_per_token = 1024;
  auto first = [](Harness& h) {
    TokenSource src;
    const Tokens tools = src.Fresh(2000);
    return h.Run(Cat({tools, src.Fresh(40)}), {Len(tools), 0});
  };
  Harness roomy(o);
  first(roomy);
  const int64_t ram = roomy.cache().Stats().ram_bytes;
  // Room for the first session and a second one of 5 pages and a state,
  // less two states: rungs must go (the second session's own points may
  // take a state or two more).
  o.ram_budget_bytes = ram + 5 * 64 * 1024 + 16 * 1024 - 2 * 16 * 1024;
  Harness h(o);
  Outcome p = first(h);
  const EntryId anchor = p.commit.anchors_created.at(0);
  const size_t rungs = h.Info(anchor)->checkpoints.size();
  ASSERT_GE(rungs, 6u);
  TokenSource other(1'000'000);
  h.Run(other.Fresh(320));
  ASSERT_NE(h.Info(anchor), nullptr);
  const size_t left = h.Info(anchor)->checkpoints.size();
  EXPECT_LE(left, rungs - 2);
  EXPECT_GT(left, 0u);
  const int64_t dropped = static_cast<int64_t>(rungs - left);
  EXPECT_EQ(h.Info(anchor)->checkpoints.front().n, (dropped + 1) * RungSpacing(o)) << "the lowest rungs go first";
  EXPECT_NE(h.Info(p.entry), nullptr) << "the conversation stays";
}

TEST(CacheAnchors, AnchorIsPinnedEvenWhenItFallsAfterTheGuard) {
  // The seed's live case: a 419-token system block and a 7-token question.
  const PayloadShape shape{64, 1024, 256};
  CacheOptions o;
  o.ram_budget_bytes = 40 * 1024;
  Harness h(o, shape);
  TokenSource src;
  const Tokens sys = src.Fresh(419);
  const LookupHints hints{419, 0};
  Outcome s1 = h.Run(Cat({sys, src.Fresh(7)}), hints);
  const std::vector<PlannedCapture> want{{410, K::kGuard}, {417, K::kAnchor}};
  EXPECT_EQ(s1.captures, want);
  ASSERT_EQ(s1.commit.anchors_created.size(), 1u);
  const EntryId anchor = s1.commit.anchors_created[0];
  // A second session restores from it: evidence of reuse.
  EXPECT_EQ(h.Run(Cat({sys, src.Fresh(8)}), hints).restore.entry, anchor);
  // Unrelated conversations push the first session's entry out of RAM; the
  // anchor, which served a restore, outlasts it.
  for (int i = 0; i < 12 && h.Info(s1.entry) != nullptr; ++i) h.Run(src.Fresh(1000));
  EXPECT_EQ(h.Info(s1.entry), nullptr);
  EXPECT_NE(h.Info(anchor), nullptr);
  EXPECT_GT(h.cache().Stats().evictions, 0);
  Outcome s2 = h.Run(Cat({sys, src.Fresh(9)}), hints);
  EXPECT_EQ(s2.restore.length, 417);
  EXPECT_EQ(s2.restore.entry, anchor);
}

TEST(CacheAnchors, AnAnchorNothingRestoredFromLeavesWithTheConversations) {
  // A system prompt with a timestamp in it pins a new anchor every request;
  // ranked by kind alone they would push every conversation out.
  const PayloadShape shape{64, 1024, 256};
  CacheOptions o;
  o.ram_budget_bytes = 48 * 1024;  // the conversation and four sessions
  Harness h(o, shape);
  TokenSource src;
  Tokens conversation = src.Fresh(600);
  h.Run(conversation);
  std::vector<EntryId> anchors;
  for (int i = 0; i < 6; ++i) {
    Outcome s = h.Run(Cat({src.Fresh(400), src.Fresh(10)}), {402, 0});
    ASSERT_EQ(s.commit.anchors_created.size(), 1u);
    anchors.push_back(s.commit.anchors_created[0]);
    if (i == 1) {  // the conversation goes on between the sessions
      conversation = Cat({conversation, src.Fresh(5)});
      EXPECT_EQ(h.Run(conversation).restore.length, 600);
    }
  }
  EXPECT_EQ(h.Info(anchors[0]), nullptr) << "the oldest unused anchor has left";
  EXPECT_EQ(h.Run(Cat({conversation, src.Fresh(5)})).restore.length, 605)
      << "the conversation used after it stays";
}

TEST(CacheAnchors, AnchorCapsEvictTheLeastRecentlyUsedAnchor) {
  const PayloadShape shape{64, 1024, 256};
  CacheOptions o;
  o.max_anchor_entries = 3;
  o.max_anchor_bytes = 1 << 30;
  Harness h(o, shape);
  TokenSource src;
  std::vector<Tokens> systems;
  for (int i = 0; i < 5; ++i) {
    systems.push_back(src.Fresh(300));
    h.Run(Cat({systems.back(), src.Fresh(10)}), {300, 0});
    EXPECT_LE(h.cache().Stats().anchors, 3);
  }
  // The three newest system prompts still restore at their anchors.
  EXPECT_EQ(h.Run(Cat({systems[4], src.Fresh(5)}), {300, 0}).restore.length, 298);
  EXPECT_EQ(h.Run(Cat({systems[2], src.Fresh(5)}), {300, 0}).restore.length, 298);
  const Outcome oldest = h.Run(Cat({systems[0], src.Fresh(5)}), {300, 0});
  EXPECT_LT(oldest.restore.length, 298);

  CacheOptions by_bytes;
  by_bytes.max_anchor_bytes = 2 * (5 * 1024 + 256);  // two 300-token anchors
  Harness hb(by_bytes, shape);
  for (int i = 0; i < 4; ++i) hb.Run(Cat({src.Fresh(300), src.Fresh(10)}), {300, 0});
  EXPECT_EQ(hb.cache().Stats().anchors, 2);
  EXPECT_LE(hb.cache().Stats().anchor_bytes, by_bytes.max_anchor_bytes);
}

TEST(CacheAnchors, SystemPromptsDifferingByFourTokensShareThroughADivergenceCheckpoint) {
  Harness h;
  TokenSource src;
  const Tokens x = src.Fresh(1000);
  auto variant = [&](Tokens four) {
    Tokens s = x;
    std::copy(four.begin(), four.end(), s.begin() + 990);
    return s;
  };
  const Tokens sys_a = variant(src.Fresh(4));
  const Tokens sys_b = variant(src.Fresh(4));
  const Tokens sys_c = variant(src.Fresh(4));
  const LookupHints hints{1000, 0};
  h.Run(Cat({sys_a, src.Fresh(20)}), hints);
  Outcome b = h.Run(Cat({sys_b, src.Fresh(20)}), hints);
  EXPECT_EQ(b.lookup.closest_shared_tokens, 990);
  // The divergence point keeps the anchor's slack before the boundary.
  const std::vector<PlannedCapture> want{{988, K::kDivergence}, {998, K::kAnchor}, {1004, K::kGuard}};
  EXPECT_EQ(b.captures, want);
  // A third variant restores all but the differing tail.
  Outcome c = h.Run(Cat({sys_c, src.Fresh(20)}), hints);
  EXPECT_EQ(c.restore.length, 988);
  EXPECT_EQ(c.restore.kind, K::kDivergence);
  // And the second variant's next session lands on its own anchor.
  EXPECT_EQ(h.Run(Cat({sys_b, src.Fresh(8)}), hints).restore.length, 998);
}

TEST(CacheAnchors, ADivergenceCheckpointServesASessionThatLeavesOneTokenEarlier) {
  // BPE merges the boundary token differently in the next prompt: it leaves
  // the shared prefix one token before the previous sibling did.
  Harness h;
  TokenSource src;
  const Tokens x = src.Fresh(1400);  // its guard (1384) lies past the boundary
  auto leave_at = [&](int64_t at) {
    Tokens s(x.begin(), x.begin() + at);
    const Tokens tail = src.Fresh(300);
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  h.Run(x);
  Outcome b = h.Run(leave_at(990));
  EXPECT_EQ(b.lookup.closest_shared_tokens, 990);
  Outcome c = h.Run(leave_at(989));
  EXPECT_EQ(c.restore.length, 990 - kBoundarySlackTokens);
  EXPECT_EQ(c.restore.kind, K::kDivergence);
}

TEST(CacheAnchors, NoDivergenceCheckpointForASmallGain) {
  Harness h;
  TokenSource src;
  const Tokens base = src.Fresh(200);
  h.Run(Cat({base, src.Fresh(400)}));
  Outcome o = h.Run(Cat({base, src.Fresh(400)}));
  EXPECT_EQ(o.lookup.closest_shared_tokens, 200);
  EXPECT_FALSE(Plans(o, K::kDivergence)) << "200 < 256 tokens of gain";
}

}  // namespace
}  // namespace lineage::cache::testing
