// Traffic without hints (issue 12, defect 3): structural checkpoints at the
// block boundaries a prompt's own length suggests, and in-flight sharing of
// a prefix another request is prefilling.
#include "cache/capture_plan.h"
#include "cache/request_driver.h"

#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

struct Live {
  RequestDriver driver;
  std::shared_ptr<CountedSequence> seq;
};

Live Begin(Harness& h, const Tokens& prompt) {
  Result<RequestDriver> d = RequestDriver::Begin(h.cache(), prompt);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return Live{std::move(d).value(), std::make_shared<CountedSequence>(&h.pages(), h.shape())};
}

void Admit(Harness& h, Live& r, const Tokens& prompt) {
  EXPECT_TRUE(VerifyRestore(prompt, r.driver.restore(), h.shape().recurrent()).ok());
  r.seq->Admit(prompt, r.driver.restore());
}

// Prefills up to n tokens, handing every capture the driver lists to it,
// then publishes what others wait for (as the server does after a chunk).
void PrefillTo(Live& r, const Tokens& prompt, int64_t n) {
  for (int64_t at : r.driver.CapturesIn(r.seq->length(), n)) {
    r.seq->Append(TokenSpan(prompt).subspan(r.seq->tokens().size(), at - r.seq->length()));
    EXPECT_TRUE(r.driver.Captured(at, r.seq->State()));
  }
  r.seq->Append(TokenSpan(prompt).subspan(r.seq->tokens().size(), n - r.seq->length()));
  r.driver.Progress(n);
  r.driver.Publish([&] { return r.seq->Kv(); });
}

void Commit(Live& r) { ASSERT_TRUE(r.driver.Commit(r.seq->Kv(), r.seq->State()).ok()); }

// One long document, many different questions about it: the requests share
// a whole-block prefix and nothing hints where it ends.
TEST(NoHints, RequestsSharingALongPrefixRestoreFromTheFirstRepetition) {
  Harness h;
  TokenSource src;
  const Tokens doc = src.Fresh(9 * 512 + 300);
  std::vector<int64_t> restored;
  for (int q = 0; q < 4; ++q) {
    const Tokens prompt = Cat({doc, src.Fresh(60 + 10 * q)});
    restored.push_back(h.Run(prompt).restore.length);
  }
  EXPECT_EQ(restored[0], 0);
  // The second request, the first to repeat the document, already restores
  // at the last block boundary inside it; the later ones at least there.
  EXPECT_EQ(restored[1], 9 * 512);
  EXPECT_GE(restored[2], 9 * 512);
  EXPECT_GE(restored[3], 9 * 512);
}

// Block-hashed traffic (a Mooncake trace): the next turn shares the previous
// prompt's whole blocks only, never the whole prompt.
TEST(NoHints, TheNextTurnAbsorbsAPromptItLeavesAtItsLastBlock) {
  Harness h;
  TokenSource src;
  const Tokens turn1 = src.Fresh(1300);
  const Outcome o1 = h.Run(turn1);
  const Tokens turn2 = Cat({Tokens(turn1.begin(), turn1.begin() + 1024), src.Fresh(900)});
  const Outcome o2 = h.Run(turn2);
  EXPECT_EQ(o2.restore.length, 1024);
  EXPECT_EQ(o2.commit.absorbed, std::vector<EntryId>{o1.entry});
  EXPECT_EQ(h.cache().Entries().size(), 1u);
  // A sibling that leaves inside a block keeps its own lineage.
  const Tokens sibling = Cat({Tokens(turn2.begin(), turn2.begin() + 1500), src.Fresh(700)});
  const Outcome o3 = h.Run(sibling);
  EXPECT_TRUE(o3.commit.absorbed.empty());
  EXPECT_EQ(h.cache().Entries().size(), 2u);
}

TEST(NoHints, StructuralPointsDoubleTheirDistanceFromTheEndAndPayForTheirBytes) {
  CacheOptions o;
  // The last boundary below m = 20,000 (19,968), then 1, 3, 7, 15, 31 blocks below it.
  EXPECT_EQ(StructuralPoints(20'000, 0, o), (std::vector<int64_t>{4096, 12'288, 16'384, 18'432, 19'456, 19'968}));
  // Nothing closer than the minimum gain above the restore point.
  EXPECT_EQ(StructuralPoints(20'000, 17'800, o), (std::vector<int64_t>{18'432, 19'456, 19'968}));
  // A state worth 2,000 tokens of KV: below the two points next to the end,
  // no two points closer than that.
  o.state_bytes = 2000 * 100;
  o.kv_bytes_per_token = 100;
  EXPECT_EQ(StructuralPoints(20'000, 0, o), (std::vector<int64_t>{4096, 12'288, 16'384, 19'456, 19'968}));
  o.structural_block_tokens = 0;
  EXPECT_TRUE(StructuralPoints(20'000, 0, o).empty());
  // Hints replace them: a prompt with an anchor plans none.
  PlanInputs in;
  in.prompt_tokens = 20'000;
  in.structural = false;
  for (const PlannedCapture& c : PlanCaptures(in, CacheOptions{})) EXPECT_NE(c.kind, PointKind::kPeriodic);
}

// Two questions about one 3,000-token document arrive together: a starts
// prefilling, b begins while a is at 0.
struct TwoQuestions {
  explicit TwoQuestions(Harness& h) {
    a = Begin(h, a_prompt);
    Admit(h, a, a_prompt);
    b = Begin(h, b_prompt);
  }
  TokenSource src;
  Tokens doc = src.Fresh(3000);
  Tokens a_prompt = Cat({doc, src.Fresh(100)}), b_prompt = Cat({doc, src.Fresh(80)});
  Live a, b;
};

// The second waits for the first's capture where they part instead of
// prefilling the shared document again.
TEST(NoHints, ARequestWaitsForThePrefixAnotherRequestIsPrefilling) {
  Harness h;
  TwoQuestions q(h);
  auto& [src, doc, a_prompt, b_prompt, a, b] = q;
  ASSERT_TRUE(b.driver.waiting());
  EXPECT_EQ(b.driver.wait()->n, BeforeBoundary(3000));
  EXPECT_EQ(b.driver.TakeShared(), SharedState::kPending);
  // The owner lists the wanted point among its captures.
  const std::vector<int64_t> caps = a.driver.CapturesIn(0, Len(a_prompt));
  EXPECT_NE(std::find(caps.begin(), caps.end(), BeforeBoundary(3000)), caps.end());
  PrefillTo(a, a_prompt, 2000);
  EXPECT_EQ(b.driver.TakeShared(), SharedState::kPending);
  PrefillTo(a, a_prompt, Len(a_prompt));
  ASSERT_EQ(b.driver.TakeShared(), SharedState::kReady);
  EXPECT_FALSE(b.driver.waiting());
  EXPECT_EQ(b.driver.restore().length, BeforeBoundary(3000));
  Admit(h, b, b_prompt);
  EXPECT_EQ(b.seq->pages_copied(), 1) << "the shared rows are the owner's pages, only the partial one is copied";
  Commit(a);
  PrefillTo(b, b_prompt, Len(b_prompt));
  Commit(b);
  h.Check();
  // The point stays in the owner's entry for later requests.
  bool kept = false;
  for (const auto& e : h.cache().Entries())
    for (const Checkpoint& c : e.checkpoints) kept |= c.n == BeforeBoundary(3000) && c.kind == PointKind::kDivergence;
  EXPECT_TRUE(kept);
  const Tokens c_prompt = Cat({doc, src.Fresh(50)});
  EXPECT_EQ(h.Run(c_prompt).restore.length, BeforeBoundary(3000));
}

// The waiter keeps the state it waited for as a branch point of its own
// entry: the owner's next turn may take the owner's copy away.
TEST(NoHints, AWaiterKeepsTheStateItWaitedForAsABranchPoint) {
  Harness h;
  TwoQuestions q(h);
  auto& [src, doc, a_prompt, b_prompt, a, b] = q;
  ASSERT_TRUE(b.driver.waiting());
  PrefillTo(a, a_prompt, Len(a_prompt));
  ASSERT_EQ(b.driver.TakeShared(), SharedState::kReady);
  Admit(h, b, b_prompt);
  Commit(a);
  PrefillTo(b, b_prompt, Len(b_prompt));
  Commit(b);
  const LineageCache::EntryInfo* e = h.Info(b.driver.entry());
  ASSERT_NE(e, nullptr);
  bool branch = false;
  for (const Checkpoint& c : e->checkpoints) branch |= c.n == BeforeBoundary(3000) && c.branch;
  EXPECT_TRUE(branch);
}

// Questions over one shared document (issue 12, mooncake traffic): a session
// whose question crosses into a new block leaves the document one block
// below its own next turn. A second session restores at the document's
// boundary; the first session's next turn then absorbs its entry. The
// boundary's state must outlive that absorption, or every later session
// finds the document's KV and no state to restore it with.
TEST(NoHints, ADocumentsBoundaryOutlivesTheTurnThatAbsorbsItsFirstHolder) {
  Harness h;
  TokenSource src;
  const Tokens doc = src.Fresh(9 * 512 + 450);
  const Tokens a1 = Cat({doc, src.Fresh(200)});  // 5,258 tokens: last block boundary 5,120
  const Outcome o1 = h.Run(a1);
  EXPECT_EQ(o1.restore.length, 0);
  // Block-hashed prompts share whole blocks: the document's last whole block ends at 4,608.
  const Tokens b = Cat({Tokens(a1.begin(), a1.begin() + 4608), src.Fresh(700)});
  const Outcome ob = h.Run(b);
  EXPECT_EQ(ob.restore.length, 4608);
  // The first session's next turn: it shares the first prompt's whole blocks.
  const Tokens a2 = Cat({Tokens(a1.begin(), a1.begin() + 5120), src.Fresh(400)});
  const Outcome o2 = h.Run(a2);
  EXPECT_EQ(o2.restore.length, 5120);
  EXPECT_EQ(o2.commit.absorbed, std::vector<EntryId>{o1.entry});
  // Both lineages keep the boundary, one state charged once.
  for (EntryId id : {ob.entry, o2.entry}) {
    const LineageCache::EntryInfo* e = h.Info(id);
    ASSERT_NE(e, nullptr);
    bool branch = false;
    for (const Checkpoint& c : e->checkpoints) branch |= c.n == 4608 && c.branch;
    EXPECT_TRUE(branch) << "entry " << id;
  }
  const Tokens c = Cat({Tokens(a1.begin(), a1.begin() + 4608), src.Fresh(120)});
  EXPECT_EQ(h.Run(c).restore.length, 4608);
}

// A prompt that leaves its sibling above the state it restored from parts
// from it at its own divergence point: the rung below stays an ordinary
// point, so it takes no protected slot in either entry.
TEST(NoHints, ARungBelowTheDivergenceIsNoBranchPoint) {
  Harness h;
  TokenSource src;
  const Tokens a1 = Cat({src.Fresh(9 * 512 + 450), src.Fresh(200)});
  const Outcome o1 = h.Run(a1);
  const Tokens b = Cat({Tokens(a1.begin(), a1.begin() + 4900), src.Fresh(700)});
  const Outcome ob = h.Run(b);
  ASSERT_GT(ob.restore.length, 0);
  ASSERT_LT(ob.restore.length, 4900);
  for (EntryId id : {o1.entry, ob.entry}) {
    const LineageCache::EntryInfo* e = h.Info(id);
    ASSERT_NE(e, nullptr);
    bool divergence_above = false;
    for (const Checkpoint& c : e->checkpoints) {
      EXPECT_FALSE(c.branch) << "entry " << id << " point " << c.n;
      divergence_above |= c.kind == PointKind::kDivergence && c.n > ob.restore.length;
    }
    if (id == ob.entry) EXPECT_TRUE(divergence_above);
  }
  // The next prompt that leaves there restores at the divergence point, above the rung.
  const Tokens c = Cat({Tokens(a1.begin(), a1.begin() + 4900), src.Fresh(90)});
  EXPECT_GT(h.Run(c).restore.length, ob.restore.length);
}

// A recurrent state costs what `spacing` tokens of KV cost; below, 2,000.
CacheOptions StateWorth2000Tokens() {
  CacheOptions o;
  o.state_bytes = 2000 * 100;
  o.kv_bytes_per_token = 100;
  return o;
}

// Admission by benefit per byte: a hint-less prompt's guard sits less than
// a block above its top structural point; a resend restores there instead.
TEST(NoHints, NoGuardWhereAStructuralPointServesTheResend) {
  const CacheOptions o = StateWorth2000Tokens();
  PlanInputs in;
  in.prompt_tokens = 20'000;
  in.structural = true;
  bool guard = false;
  for (const PlannedCapture& c : PlanCaptures(in, o)) guard |= c.kind == PointKind::kGuard;
  EXPECT_FALSE(guard);
  // A prompt with hints keeps it: its next lower point may be a turn away.
  in.structural = false;
  in.history_end_tokens = 19'990;
  guard = false;
  for (const PlannedCapture& c : PlanCaptures(in, o)) guard |= c.kind == PointKind::kGuard;
  EXPECT_TRUE(guard);
}

// The second boundary below the end hedges a cold prompt's unknown shared
// prefix; a prompt restored at r already knows where it leaves what is
// stored, and there the second point would cost a state to save one block.
TEST(NoHints, ARestoredPromptKeepsOnlyTheTopPointNearItsEnd) {
  const CacheOptions o = StateWorth2000Tokens();
  EXPECT_EQ(StructuralPoints(20'000, 0, o), (std::vector<int64_t>{4096, 12'288, 16'384, 19'456, 19'968}));
  EXPECT_EQ(StructuralPoints(20'000, 10'000, o), (std::vector<int64_t>{12'288, 16'384, 19'968}));
}

// After generation a hint-less entry keeps its prompt end only where it
// saves a state's worth of tokens over its newest checkpoint; a next prompt
// in block-shaped traffic leaves at a block boundary below it anyway.
TEST(NoHints, ThePromptEndStaysAfterTheReplyOnlyWhereItPaysForItsState) {
  for (bool hints : {false, true}) {
    Harness h;
    TokenSource src;
    const Tokens t1 = src.Fresh(1200);  // structural points 512 and 1,024; no guard (1,184 - 1,024 < 256)
    Outcome o = h.Run(t1, hints ? LookupHints{0, 1190} : LookupHints{});
    ASSERT_TRUE(h.Extend(o, src.Fresh(100)).ok());
    using P = std::vector<std::pair<int64_t, PointKind>>;
    if (hints) {
      EXPECT_EQ(Points(h.Info(o.entry)), (P{{1184, PointKind::kGuard}, {1190, PointKind::kHistoryEnd}, {1200, PointKind::kFinal}}));
    } else {
      EXPECT_EQ(Points(h.Info(o.entry)), (P{{512, PointKind::kPeriodic}, {1024, PointKind::kPeriodic}}));
    }
  }
}

TEST(NoHints, AWaiterFallsBackWhenThePrefillItWaitsForEnds) {
  Harness h;
  TwoQuestions q(h);
  auto& [src, doc, a_prompt, b_prompt, a, b] = q;
  ASSERT_TRUE(b.driver.waiting());
  PrefillTo(a, a_prompt, 1000);
  a.driver.Release();  // cancelled before reaching the shared point
  EXPECT_EQ(b.driver.TakeShared(), SharedState::kGone);
  EXPECT_FALSE(b.driver.waiting());
  EXPECT_EQ(b.driver.restore().length, 0);
  Admit(h, b, b_prompt);
  PrefillTo(b, b_prompt, Len(b_prompt));
  Commit(b);
  h.Check();
}

TEST(NoHints, NoWaitBehindAPrefillThatIsBehindTheWaitersOwnRestorePoint) {
  Harness h;
  TokenSource src;
  const Tokens doc = src.Fresh(3000);
  // A starts cold; then a stored sequence gives B a restore point inside the
  // document that A has not reached yet: waiting would delay B.
  Live a = Begin(h, Cat({doc, src.Fresh(100)}));
  h.Run(Cat({Tokens(doc.begin(), doc.begin() + 2048), src.Fresh(10)}));
  Live b = Begin(h, Cat({doc, src.Fresh(80)}));
  EXPECT_GT(b.driver.restore().length, 0);
  EXPECT_FALSE(b.driver.waiting());
  // Once A is past B's restore point, a third request does wait for it.
  a.driver.Progress(2000);
  Live c = Begin(h, Cat({doc, src.Fresh(70)}));
  EXPECT_TRUE(c.driver.waiting());
}

// A third request sharing the prefix waits for the prefill that computes it,
// not for a second waiter: that one's restore jumps past the shared point
// when its own wait ends, and it never computes it (the server's third
// request waited for the second's whole prefill and then started cold).
TEST(NoHints, AThirdRequestWaitsForThePrefillThatComputesThePrefixNotForAnotherWaiter) {
  Harness h;
  TwoQuestions q(h);
  auto& [src, doc, a_prompt, b_prompt, a, b] = q;
  ASSERT_TRUE(b.driver.waiting());
  PrefillTo(a, a_prompt, 1000);
  Live c = Begin(h, Cat({doc, src.Fresh(90)}));
  ASSERT_TRUE(c.driver.waiting());
  EXPECT_EQ(c.driver.wait()->owner, a.driver.prefill_id());
  PrefillTo(a, a_prompt, Len(a_prompt));
  EXPECT_EQ(b.driver.TakeShared(), SharedState::kReady);
  EXPECT_EQ(c.driver.TakeShared(), SharedState::kReady);
  EXPECT_EQ(c.driver.restore().length, BeforeBoundary(3000));
}

// A request that arrives while the owner's step over the shared prefix is
// running cannot have its point added to that step: it waits for the point
// the owner planned anyway below it (its anchor), not for one that never
// comes (the server's waiter once waited for the owner's whole prefill and
// then started cold).
TEST(NoHints, AWaiterArrivingDuringTheOwnersStepTakesTheOwnersPlannedPoint) {
  Harness h;
  TokenSource src;
  const Tokens doc = src.Fresh(3000);
  const Tokens a_prompt = Cat({doc, src.Fresh(100)}), b_prompt = Cat({doc, src.Fresh(80)});
  LookupHints hints;
  hints.anchor_tokens = 2000;
  Result<RequestDriver> ad = RequestDriver::Begin(h.cache(), a_prompt, hints);
  ASSERT_TRUE(ad.ok());
  Live a{std::move(ad).value(), std::make_shared<CountedSequence>(&h.pages(), h.shape())};
  Admit(h, a, a_prompt);
  // One step over [0, 3050): its captures are fixed, its frontier is 3050.
  const std::vector<int64_t> caps = a.driver.CapturesIn(0, 3050);
  const int64_t anchor = AnchorPoint(hints);
  ASSERT_NE(std::find(caps.begin(), caps.end(), anchor), caps.end());
  a.driver.Progress(3050);
  Live b = Begin(h, b_prompt);
  ASSERT_TRUE(b.driver.waiting());
  EXPECT_EQ(b.driver.wait()->n, anchor);
  for (int64_t at : caps) {
    a.seq->Append(TokenSpan(a_prompt).subspan(a.seq->tokens().size(), at - a.seq->length()));
    EXPECT_TRUE(a.driver.Captured(at, a.seq->State()));
  }
  PrefillTo(a, a_prompt, 3050);
  ASSERT_EQ(b.driver.TakeShared(), SharedState::kReady);
  EXPECT_EQ(b.driver.restore().length, anchor);
  Admit(h, b, b_prompt);
  PrefillTo(a, a_prompt, Len(a_prompt));
  Commit(a);
  PrefillTo(b, b_prompt, Len(b_prompt));
  Commit(b);
  h.Check();
}

TEST(NoHints, WaitsAreOffForThePreviousDesignAndWhenSwitchedOff) {
  for (bool exact : {false, true}) {
    CacheOptions o;
    if (exact) o.mode = CacheMode::kExact;
    else o.share_in_flight = false;
    Harness h(o);
    TokenSource src;
    const Tokens doc = src.Fresh(3000);
    Live a = Begin(h, Cat({doc, src.Fresh(100)}));
    Live b = Begin(h, Cat({doc, src.Fresh(80)}));
    EXPECT_FALSE(b.driver.waiting());
    EXPECT_EQ(a.driver.prefill_id(), 0u);
  }
}

}  // namespace
}  // namespace lineage::cache::testing
