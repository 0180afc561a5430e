// The conversation behaviours of issue 4: next turn, resends, edits, absorption,
// end of generation, concurrent commits from one parent.
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

using K = PointKind;

TEST(CacheTurns, TurnTwoRestoresAtTurnOneLength) {
  Harness h;
  TokenSource src;
  const Tokens t1 = src.Fresh(1000);
  h.Run(t1);
  const Tokens t2 = Cat({t1, src.Fresh(120), src.Fresh(40)});
  Outcome o = h.Run(t2);
  EXPECT_EQ(o.restore.length, 1000);
  EXPECT_EQ(o.restore.kind, K::kEntryEnd);
  EXPECT_EQ(o.restore.tier, Tier::kRam);
}

TEST(CacheTurns, ResendOfLongSuffixPromptLandsOnGuard) {
  Harness h(EventPointsOnly());
  TokenSource src;
  const Tokens p = src.Fresh(2000);
  Outcome first = h.Run(p);
  ASSERT_EQ(first.captures.size(), 1u);
  EXPECT_EQ(first.captures[0], (PlannedCapture{2000 - 16, K::kGuard}));
  Outcome again = h.Run(p);
  EXPECT_EQ(again.restore.length, 2000 - 16);
  EXPECT_EQ(again.restore.kind, K::kGuard);
}

TEST(CacheTurns, ResendOfShortSuffixPromptLandsOnPreviousBoundary) {
  Harness h;
  TokenSource src;
  const Tokens t1 = src.Fresh(1000);
  h.Run(t1);
  const Tokens t2 = Cat({t1, src.Fresh(100)});
  Outcome second = h.Run(t2);
  EXPECT_TRUE(second.captures.empty()) << "a 100-token suffix gets no guard";
  Outcome again = h.Run(t2);
  EXPECT_EQ(again.restore.length, 1000);
  EXPECT_EQ(again.restore.kind, K::kFinal);
}

TEST(CacheTurns, EditedLastMessageLandsOnNewestCheckpointBeforeTheEdit) {
  Harness h(EventPointsOnly());
  TokenSource src;
  const Tokens t1 = src.Fresh(1000);
  const Tokens t2 = Cat({t1, src.Fresh(300)});
  const Tokens q3 = src.Fresh(400);
  const Tokens t3 = Cat({t2, q3});
  h.Run(t1);
  h.Run(t2);
  h.Run(t3);
  // Stored points of the lineage: final 1000, guard 1284, final 1300, guard 1684.
  // The edit changes the last message from its 201st token on.
  Tokens edited = t3;
  for (size_t i = 1300 + 200; i < edited.size(); ++i) edited[i] = -static_cast<TokenId>(i);
  Outcome o = h.Run(edited);
  EXPECT_EQ(o.restore.length, 1300);
  EXPECT_EQ(o.restore.kind, K::kFinal);
  EXPECT_EQ(o.lookup.closest_shared_tokens, 1500);
  // An edit inside the second message lands on the guard before it.
  Tokens edited2 = t3;
  for (size_t i = 1290; i < edited2.size(); ++i) edited2[i] = -static_cast<TokenId>(i) - 5000;
  Outcome o2 = h.Run(edited2);
  EXPECT_EQ(o2.restore.length, 1284);
  EXPECT_EQ(o2.restore.kind, K::kGuard);
}

TEST(CacheTurns, AbsorptionFreesTheOldEntryAndKeepsItsBoundary) {
  const PayloadShape shape{64, 1024, 256};
  Harness h(EventPointsOnly(), shape);
  TokenSource src;
  const Tokens t1 = src.Fresh(1000);
  Outcome first = h.Run(t1);
  const Tokens t2 = Cat({t1, src.Fresh(100)});
  Outcome second = h.Run(t2);
  ASSERT_EQ(second.commit.absorbed, std::vector<EntryId>{first.entry});
  EXPECT_EQ(h.Info(first.entry), nullptr);
  const auto pts = Points(h.Info(second.entry));
  const std::vector<std::pair<int64_t, PointKind>> want{{984, K::kGuard}, {1000, K::kFinal}};
  EXPECT_EQ(pts, want);
  // RAM holds t2's pages once (the page holding token 1000 was copied at
  // admission; turn 1's copy is freed) and three states: end, final, guard.
  const CacheStats st = h.cache().Stats();
  EXPECT_EQ(st.entries, 1);
  EXPECT_EQ(st.kv_bytes, (1100 + 63) / 64 * 1024);
  EXPECT_EQ(st.recurrent_bytes, 3 * 256);
  EXPECT_EQ(st.absorptions, 1);
}

TEST(CacheTurns, EndOfGenerationRestoresPastAVerbatimReply) {
  Harness h;
  TokenSource src;
  // Rendered from a chat template: the history ends 10 tokens before the
  // prompt end (prompts without hints: no_hints_test.cpp).
  const Tokens t1 = src.Fresh(1000);
  Outcome first = h.Run(t1, {0, 990});
  const Tokens reply = src.Fresh(700);
  ASSERT_TRUE(h.Extend(first, reply).ok());
  const Tokens t2 = Cat({t1, reply, src.Fresh(30)});
  Outcome second = h.Run(t2, {0, 1700});
  EXPECT_EQ(second.restore.length, 1700);
  EXPECT_EQ(second.restore.kind, K::kEntryEnd);
  // The prompt end stays a turn boundary: an edited reply lands on it.
  Tokens other = Cat({t1, src.Fresh(50)});
  Outcome third = h.Run(other, {0, 1000});
  EXPECT_EQ(third.restore.length, 1000);
  EXPECT_EQ(third.restore.kind, K::kFinal);
}

TEST(CacheTurns, ExtendingAnAbsorbedEntryIsNotFound) {
  Harness h;
  TokenSource src;
  const Tokens t1 = src.Fresh(300);
  Outcome first = h.Run(t1);
  h.Run(Cat({t1, src.Fresh(20)}));  // absorbs the first entry
  const Status st = h.Extend(first, src.Fresh(10));
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
}

TEST(CacheTurns, TwoRequestsRestoredFromOneEntryBothCommit) {
  Harness h;
  TokenSource src;
  const Tokens base = src.Fresh(800);
  Outcome parent = h.Run(base);
  const Tokens a = Cat({base, src.Fresh(60)});
  const Tokens b = Cat({base, src.Fresh(90)});
  Harness::Open ra = h.Start(a);
  Harness::Open rb = h.Start(b);
  EXPECT_EQ(ra.lookup.restore.length, 800);
  EXPECT_EQ(rb.lookup.restore.length, 800);
  Outcome ca = h.Finish(std::move(ra));
  Outcome cb = h.Finish(std::move(rb));
  EXPECT_EQ(ca.commit.absorbed, std::vector<EntryId>{parent.entry});
  EXPECT_TRUE(cb.commit.parent_was_absorbed);
  EXPECT_TRUE(cb.commit.absorbed.empty());
  ASSERT_NE(h.Info(ca.entry), nullptr);
  ASSERT_NE(h.Info(cb.entry), nullptr);
  // Both lineages continue from their own ends.
  EXPECT_EQ(h.Run(Cat({a, src.Fresh(10)})).restore.length, Len(a));
  EXPECT_EQ(h.Run(Cat({b, src.Fresh(10)})).restore.length, Len(b));
  EXPECT_EQ(h.cache().Stats().live_leases, 0);
}

TEST(CacheTurns, ThinkingTemplateRestoresAtHistoryEndAndAbsorbs) {
  Harness h;
  TokenSource src;
  const Tokens history = src.Fresh(1200);
  const Tokens gen_think = src.Fresh(4);  // "<|im_start|>assistant\n<think>\n"
  const Tokens p1 = Cat({history, gen_think});
  Outcome first = h.Run(p1, {0, Len(history)});
  EXPECT_EQ(first.captures.back(), (PlannedCapture{1200, K::kHistoryEnd}));
  // The next prompt renders the reply without <think>: it shares the history
  // and the first two tokens of the generation prompt.
  const Tokens p2 = Cat({history, Tokens(gen_think.begin(), gen_think.begin() + 2), src.Fresh(200)});
  Outcome second = h.Run(p2, {0, Len(p2) - 4});
  EXPECT_EQ(second.restore.length, 1200);
  EXPECT_EQ(second.restore.kind, K::kHistoryEnd);
  EXPECT_EQ(second.commit.absorbed, std::vector<EntryId>{first.entry});
}

TEST(CacheTurns, ExplanationsNameTheChoiceAndTheMiss) {
  Harness h(EventPointsOnly());
  TokenSource src;
  const Tokens t1 = src.Fresh(1000);
  Outcome first = h.Run(t1);
  Tokens edited = t1;
  edited[600] = -1;
  Outcome o = h.Run(edited);
  EXPECT_EQ(o.lookup.closest_entry, first.entry);
  EXPECT_EQ(o.lookup.closest_shared_tokens, 600);
  const std::string line = o.lookup.ToString();
  EXPECT_NE(line.find("restore cold"), std::string::npos) << line;
  EXPECT_NE(line.find("sharing 600 tokens"), std::string::npos) << line;
  EXPECT_NE(line.find("no restore point stored between 0 and 600"), std::string::npos) << line;
  EXPECT_NE(line.find("divergence@598"), std::string::npos) << line;  // the boundary slack
  Outcome next = h.Run(Cat({t1, src.Fresh(10)}));
  const std::string commit = next.commit.ToString();
  EXPECT_NE(commit.find("absorbed " + std::to_string(first.entry)), std::string::npos) << commit;
}

TEST(CacheTurns, BadInputIsAnErrorValue) {
  Harness h;
  TokenSource src;
  const Tokens p = src.Fresh(100);
  EXPECT_EQ(h.cache().Lookup(Tokens{}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(h.cache().Lookup(p, {101, 0}).status().code(), StatusCode::kInvalidArgument);
  CountedSequence seq(&h.pages(), h.shape());
  seq.Append(p);
  CommitRequest short_kv{Tokens(p.begin(), p.begin() + 50), seq.Kv(), seq.State(), {}, {}};
  EXPECT_EQ(h.cache().Commit(std::move(short_kv)).status().code(), StatusCode::kInvalidArgument);
  CommitRequest no_state{p, seq.Kv(), nullptr, {}, {}};
  EXPECT_EQ(h.cache().Commit(std::move(no_state)).status().code(), StatusCode::kInvalidArgument);
  CommitRequest bad_capture{p, seq.Kv(), seq.State(), {{101, PointKind::kGuard, seq.State()}}, {}};
  EXPECT_EQ(h.cache().Commit(std::move(bad_capture)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(h.cache().Stats().entries, 0);
  // A lookup's lease survives a rejected commit and is released with it.
  auto lr = h.cache().Lookup(p);
  ASSERT_TRUE(lr.ok());
  CommitRequest rejected{p, nullptr, seq.State(), {}, std::move(lr->lease)};
  EXPECT_FALSE(h.cache().Commit(std::move(rejected)).ok());
  EXPECT_EQ(h.cache().Stats().live_leases, 0);
}

TEST(CacheTurns, RestorePointIsNeverThePromptLength) {
  Harness h;
  TokenSource src;
  const Tokens p = src.Fresh(100);  // short: no guard
  h.Run(p);
  Outcome again = h.Run(p);
  EXPECT_EQ(again.restore.length, 0) << "the entry end equals m and nothing else is stored";
}

}  // namespace
}  // namespace lineage::cache::testing

namespace lineage::cache::testing {
namespace {

// A long chat with replies (end of generation): an edit of the last user
// message restores where the previous reply ended, however many turns the
// lineage has thinned away.
TEST(CacheTurns, AnEditedLastMessageAfterManyTurnsRestoresThePreviousReplysEnd) {
  Harness h;
  TokenSource src;
  const Tokens sys = src.Fresh(4000);
  Tokens history = sys;
  const int64_t user[] = {131, 20, 260, 68, 302, 254, 160};
  const int64_t reply[] = {267, 782, 610, 591, 458, 638, 732};
  int64_t before_last = 0;
  for (size_t t = 0; t < 7; ++t) {
    before_last = Len(history);
    history = Cat({history, src.Fresh(user[t])});
    Outcome o = h.Run(history, {4000, 0});
    ASSERT_TRUE(h.Extend(o, src.Fresh(reply[t])).ok());
    if (t + 1 < 7) history = o.seq->tokens();
  }
  // The last message edited: it shares everything up to its own start.
  Tokens edited = Cat({Tokens(history.begin(), history.begin() + before_last), src.Fresh(236)});
  Outcome o = h.Run(edited, {4000, 0});
  EXPECT_EQ(o.restore.length, before_last);
}

}  // namespace
}  // namespace lineage::cache::testing
