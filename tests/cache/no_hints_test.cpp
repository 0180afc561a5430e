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
