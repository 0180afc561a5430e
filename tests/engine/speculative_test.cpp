// Speculative decoding on every architecture: verifying drafts in one step
// and rewinding past the rejected ones gives the tokens of plain greedy
// decoding, token for token, wherever the drafts go wrong (first draft,
// middle, last, none), and the sequence left behind is the one decoding
// would have left (its snapshot, restored and continued, equals a cold
// prefill). Each verified row's logits equal the decode step's at that
// position bit for bit (Segment::rows_as_decode): on a random model with
// quantised weights a rounding difference anywhere grows through the int8
// activations into percent-size logit changes and other greedy tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "engine/paged_attention.h"
#include "engine/prompt_lookup.h"
#include "engine/sampler.h"
#include "engine/speculation.h"
#include "engine_test_util.h"

namespace lineage::engine {
namespace {

using testing::ColdPrefill;
using testing::MakeEngine;
using testing::MaxRelError;
using testing::Tokens;
using testing::TinyModel;

class Speculative : public ::testing::TestWithParam<model::Arch> {
 protected:
  void SetUp() override { engine_ = MakeEngine(TinyModel(GetParam()), 2, 16); }
  int64_t vocab() const { return engine_->config().vocab; }

  // Greedy decode of n tokens after `prompt`; logits_out[i] is the row that chose token i.
  std::vector<int32_t> Greedy(const std::vector<int32_t>& prompt, int64_t n,
                              std::vector<std::vector<float>>* logits_out) {
    Sequence seq = engine_->NewSequence();
    PrefillResult r;
    EXPECT_TRUE(engine_->Prefill(seq, prompt, {}, &r).ok());
    std::vector<int32_t> out{Argmax(r.logits)};
    logits_out->push_back(r.logits);
    std::vector<float> logits;
    while (static_cast<int64_t>(out.size()) < n) {
      Sequence* one[] = {&seq};
      EXPECT_TRUE(engine_->Decode(one, std::span(&out.back(), 1), &logits).ok());
      out.push_back(Argmax(logits));
      logits_out->push_back(logits);
    }
    return out;
  }

  std::unique_ptr<Engine> engine_;
};

TEST_P(Speculative, GreedyTokensEqualDecodingWhereverDraftsFail) {
  const std::vector<int32_t> prompt = Tokens(37, vocab(), 5);
  const int64_t n = 40;
  std::vector<std::vector<float>> want_logits;
  const std::vector<int32_t> want = Greedy(prompt, n, &want_logits);

  // Drafts: the true continuation with one token wrong at a position that
  // cycles through every place in the run (and runs with none wrong).
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine_->Prefill(seq, prompt, {}, &r).ok());
  std::vector<int32_t> got{Argmax(r.logits)};
  SpecOptions so;
  so.type = SpecType::kNgram;
  so.draft_max = 5;
  so.adaptive = false;
  Speculator spec(so);  // the drafts come from the test, not from Propose
  std::vector<float> logits;
  double worst = 0;
  int64_t round = 0, rewinds = 0;
  while (static_cast<int64_t>(got.size()) < n) {
    const int64_t done = static_cast<int64_t>(got.size());
    const int64_t k = std::min<int64_t>(so.draft_max, n - done);
    std::vector<int32_t> drafts(want.begin() + done, want.begin() + done + k);
    const int64_t wrong = round++ % (so.draft_max + 2);  // 0..k-1 wrong there; k, k+1: all right
    if (wrong < k) drafts[wrong] = (drafts[wrong] + 1) % static_cast<int32_t>(vocab());
    std::vector<int32_t> run{got.back()};
    run.insert(run.end(), drafts.begin(), drafts.end());
    const int64_t start = seq.num_tokens();
    const VerifyRun vr = spec.Run(&seq, run);
    ASSERT_TRUE(engine_->Verify(std::span(&vr, 1), &logits).ok());
    ASSERT_EQ(seq.num_tokens(), start + static_cast<int64_t>(run.size()));
    const int64_t rows = TakeVerified(drafts, logits, vocab(), [&](int64_t, std::span<const float> row) {
      const size_t at = got.size();
      worst = std::max(worst, MaxRelError(std::vector<float>(row.begin(), row.end()), want_logits[at]));
      got.push_back(Argmax(row));
      return static_cast<int64_t>(got.size()) >= n ? -1 : got.back();
    });
    if (rows < static_cast<int64_t>(run.size())) ++rewinds;
    spec.Keep(*engine_, seq, start, rows, static_cast<int64_t>(run.size()));
    ASSERT_EQ(seq.num_tokens(), static_cast<int64_t>(prompt.size() + got.size()) - 1);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(worst, 0.0) << "verified rows against decode rows";
  EXPECT_GT(rewinds, 3);
  EXPECT_GT(spec.accepted(), 0);
  EXPECT_LT(spec.accepted(), spec.proposed());

  // The sequence is the one decoding leaves: its snapshot, restored and
  // continued by a prefill, equals a cold prefill of the same tokens.
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), want.begin(), want.end() - 1);
  testing::ExpectRestoreEqualsCold(*engine_, seq, all);
}

TEST_P(Speculative, SeveralSequencesVerifyInOneStep) {
  // Two sequences of different lengths, one with good drafts and one with a
  // bad first draft, in one step: each gets its own decode logits.
  const std::vector<int32_t> pa = Tokens(20, vocab(), 1), pb = Tokens(45, vocab(), 2);
  std::vector<std::vector<float>> la, lb;
  const std::vector<int32_t> wa = Greedy(pa, 6, &la), wb = Greedy(pb, 6, &lb);
  Sequence a = engine_->NewSequence(), b = engine_->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine_->Prefill(a, pa, {}, &r).ok());
  ASSERT_TRUE(engine_->Prefill(b, pb, {}, &r).ok());
  const std::vector<int32_t> ra{wa[0], wa[1], wa[2], wa[3]};
  const std::vector<int32_t> rb{wb[0], (wb[1] + 1) % static_cast<int32_t>(vocab()), wb[2]};
  RollbackLog log_a, log_b;
  const VerifyRun runs[] = {{&a, ra, &log_a}, {&b, rb, &log_b}};
  std::vector<float> logits;
  ASSERT_TRUE(engine_->Verify(runs, &logits).ok());
  ASSERT_EQ(logits.size(), static_cast<size_t>(7 * vocab()));
  auto row = [&](int64_t i) { return std::vector<float>(logits.begin() + i * vocab(), logits.begin() + (i + 1) * vocab()); };
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(row(i), la[i + 1]) << "a row " << i;
  EXPECT_EQ(row(4), lb[1]);
  EXPECT_NE(Argmax(row(4)), rb[1]);
  // b keeps only its last token: rewind to the state after it, then decode on.
  engine_->RollBack(b, static_cast<int64_t>(pb.size()) + 1, log_b);
  Sequence* one[] = {&b};
  ASSERT_TRUE(engine_->Decode(one, std::span(&wb[1], 1), &logits).ok());
  EXPECT_EQ(logits, lb[2]);
}

TEST_P(Speculative, LongContextRowsEqualDecodeRows) {
  // Past two parts of keys (paged_attention.h: kDecodePartKeys) a decode
  // row's attention is split and merged; verified rows split the same way.
  const std::vector<int32_t> prompt = Tokens(2 * kDecodePartKeys + 90, vocab(), 4);
  std::vector<std::vector<float>> want;
  const std::vector<int32_t> tokens = Greedy(prompt, 7, &want);
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine_->Prefill(seq, prompt, {}, &r).ok());
  RollbackLog log;
  const VerifyRun run{&seq, tokens, &log};
  std::vector<float> logits;
  ASSERT_TRUE(engine_->Verify(std::span(&run, 1), &logits).ok());
  for (size_t i = 0; i + 1 < tokens.size(); ++i)
    EXPECT_EQ(std::vector<float>(logits.begin() + i * vocab(), logits.begin() + (i + 1) * vocab()), want[i + 1])
        << "row " << i;
}

TEST_P(Speculative, RejectsBadRuns) {
  Sequence a = engine_->NewSequence();
  std::vector<float> logits;
  const std::vector<int32_t> bad{0, static_cast<int32_t>(vocab())};
  RollbackLog log;
  const VerifyRun run{&a, bad, &log};
  EXPECT_FALSE(engine_->Verify(std::span(&run, 1), &logits).ok());
  const std::vector<int32_t> ok{1, 2};
  const VerifyRun twice[] = {{&a, ok, &log}, {&a, ok, &log}};
  EXPECT_FALSE(engine_->Verify(twice, &logits).ok());
  EXPECT_EQ(a.num_tokens(), 0);
  // A refused step logs nothing to roll back, not even for its good runs:
  // a rollback after it only goes back in the KV.
  SpecOptions so;
  so.type = SpecType::kNgram;
  Speculator sa(so), sb(so);
  Sequence b = engine_->NewSequence();
  RollbackLog* kept = sa.Run(&a, ok).rollback;
  kept->tokens = 7;  // as a previous round left it
  const VerifyRun mixed[] = {sa.Run(&a, ok), sb.Run(&b, bad)};
  EXPECT_FALSE(engine_->Verify(mixed, &logits).ok());
  EXPECT_EQ(kept->tokens, 0);
  EXPECT_EQ(a.num_tokens(), 0);
}

INSTANTIATE_TEST_SUITE_P(Archs, Speculative,
                         ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3, model::Arch::kQwen3_5Moe,
                                           model::Arch::kQwen3Next, model::Arch::kKimiLinear, model::Arch::kGlmDsa,
                                           model::Arch::kDeepseek32, model::Arch::kKdaDsa, model::Arch::kKimiK3),
                         [](const auto& info) { return std::string(model::ArchName(info.param)); });

TEST(PromptLookup, DraftsFollowTheMostRecentEarlierOccurrence) {
  const std::vector<int32_t> prompt{5, 6, 7, 8, 9, 1, 2, 3, 7, 8, 4, 4};
  // Tail "7 8" (ngram 2) last occurred at 8..9, followed by 4 4 ("7 8 9" earlier is older).
  const std::vector<int32_t> reply{7, 8};
  EXPECT_EQ(PromptLookupDrafts(prompt, reply, 3), (std::vector<int32_t>{4, 4, 7}));
  // A 3-gram beats a 2-gram: "1 2 3" occurs once, so the tail "2 3" ... "1 2 3" -> 7.
  const std::vector<int32_t> reply3{1, 2, 3};
  EXPECT_EQ(PromptLookupDrafts(prompt, reply3, 2), (std::vector<int32_t>{7, 8}));
  // No repeat: nothing.
  const std::vector<int32_t> fresh{100, 101};
  EXPECT_TRUE(PromptLookupDrafts(prompt, fresh, 4).empty());
  EXPECT_TRUE(PromptLookupDrafts(prompt, reply, 0).empty());
  // A loop of period 2 drafts past the end of the context.
  const std::vector<int32_t> loop{3, 9, 3, 9, 3, 9};
  EXPECT_EQ(PromptLookupDrafts(loop, {}, 5), (std::vector<int32_t>{3, 9, 3, 9, 3}));
}

TEST(Speculator, FixedCountsHonourTheLimitsAndTheMinimum) {
  SpecOptions so;
  so.type = SpecType::kNgram;
  so.draft_max = 6;
  so.draft_min = 2;
  so.adaptive = false;
  Speculator spec(so);
  const std::vector<int32_t> loop{3, 9, 3, 9, 3, 9, 3, 9};
  EXPECT_EQ(spec.Propose(loop, {}, 100, StepCosts(0.3)).size(), 6u);
  EXPECT_EQ(spec.Propose(loop, {}, 4, StepCosts(0.3)).size(), 4u);  // the caller's limit
  EXPECT_TRUE(spec.Propose(loop, {}, 1, StepCosts(0.3)).empty());   // under draft_min
  const std::vector<int32_t> fresh{1, 2, 3, 4, 5};
  EXPECT_TRUE(spec.Propose(fresh, {}, 100, StepCosts(0.3)).empty());  // nothing to draft from
  Speculator none(SpecOptions{});
  EXPECT_TRUE(none.Propose(loop, {}, 100, StepCosts(0.3)).empty());
  EXPECT_TRUE(ParseSpecType("ngram-simple").ok());
  EXPECT_FALSE(ParseSpecType("eagle9").ok());
}

TEST(Speculator, DraftsWhatPaysForItsRows) {
  SpecOptions so;
  so.type = SpecType::kNgram;
  so.draft_max = 16;
  Speculator spec(so);
  // Prior acceptance 1/2: one draft pays at a row cost of 0.35, two do not.
  EXPECT_EQ(spec.DraftCount(16, 100, StepCosts(0.35)), 1);
  // Rows that cost almost nothing: draft more on the same estimate.
  EXPECT_GT(spec.DraftCount(16, 100, StepCosts(0.02)), 3);
  // A sequence that takes every draft drafts many.
  for (int i = 0; i < 30; ++i) spec.Settle(4, 4);
  EXPECT_GT(spec.acceptance(), 0.9);
  EXPECT_GE(spec.DraftCount(16, 100, StepCosts(0.35)), 6);
  EXPECT_EQ(spec.DraftCount(16, 5, StepCosts(0.35)), 5);  // the limit
  // ... and one whose drafts all fail stops, probing now and then.
  for (int i = 0; i < 40; ++i) spec.Settle(1, 0);
  EXPECT_LT(spec.acceptance(), 0.1);
  int drafted = 0;
  for (int i = 0; i < 4 * Speculator::kProbeEvery; ++i) drafted += spec.DraftCount(16, 100, StepCosts(0.35)) > 0;
  EXPECT_EQ(drafted, 4);
  // Dearer drafts (an MTP pass as well as the row) probe more rarely: a
  // draft costing 0.8 of a step probes every 16 rounds, 5% of the steps.
  drafted = 0;
  for (int i = 0; i < 64; ++i) drafted += spec.DraftCount(16, 100, StepCosts(0.8)) > 0;
  EXPECT_EQ(drafted, 4);
  // Rows as dear as a whole step never pay, however sure the drafts.
  Speculator sure(so);
  for (int i = 0; i < 60; ++i) sure.Settle(8, 8);
  EXPECT_EQ(sure.DraftCount(16, 100, StepCosts(1.0)), 0);
}

// The step cost as a curve: learnt from steps that all verify drafts (a
// sequence that always drafts never times a one-row step), with the jump
// where the row kernels need a second pass, it keeps the drafts at the
// size before the jump; a straight line of a cost per row learnt from
// small steps would not.
TEST(StepCosts, LearnsTheCurveFromDraftingStepsAlone) {
  // Seconds of a step of n rows: 20 ms, 3 ms per further row, +12 ms
  // from 6 rows on.
  const auto truth = [](int64_t n) { return 0.020 + 0.003 * static_cast<double>(n - 1) + (n >= 6 ? 0.012 : 0.0); };
  StepCosts costs;
  EXPECT_NEAR(costs.StepCost(5), 1 + 4 * 0.35, 1e-9);  // the prior until anything is timed
  for (int round = 0; round < 20; ++round) {
    for (int64_t n : {2, 3, 5, 6}) costs.Observe(n, 1, truth(n));
  }
  for (int64_t n = 1; n <= 6; ++n) EXPECT_NEAR(costs.StepCost(n), truth(n) / truth(1), 1e-6) << n;
  // Beyond the largest size timed, the slope of its last segment: here the
  // jump's, dearer than the truth, so no larger size looks cheap untried.
  EXPECT_GT(costs.StepCost(8), truth(8) / truth(1));
  EXPECT_NEAR(costs.row_cost(), 0.15, 1e-6);
  // Two sequences of 3 rows each are timed as 3 rows per sequence.
  costs.Observe(6, 2, 2 * 1.1 * truth(3));
  EXPECT_GT(costs.StepCost(3), truth(3) / truth(1));
  SpecOptions so;
  so.type = SpecType::kNgram;
  so.draft_max = 16;
  Speculator spec(so);
  // Drafts right 4 times in 5: 4 drafts give 3.36 tokens for 1.6 steps, 5
  // give 3.69 for 2.2.
  for (int i = 0; i < 60; ++i) spec.Settle(5, i % 2 ? 4 : 3);
  EXPECT_NEAR(spec.acceptance(), 0.78, 0.03);
  EXPECT_EQ(spec.DraftCount(16, 100, costs), 4);
  // What an MTP draft costs on top moves the choice down.
  EXPECT_LT(spec.DraftCount(16, 100, costs, 0.3), 4);
}

}  // namespace
}  // namespace lineage::engine

namespace lineage::engine {
namespace {

// Sampling with drafts keeps the model's distribution: over many seeds, the
// first token of a round follows softmax(row 0) and, where it took the
// draft, the second follows softmax(row 1) — the distribution after the
// draft — by a chi-square test on a 16-token vocabulary (below six
// standard deviations over its mean; a sampler that drew the second token
// from row 0 lands hundreds above).
double ChiSquare(const std::vector<int64_t>& counts, const std::vector<double>& probs, int64_t* dof) {
  const int64_t n = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  double chi = 0;
  *dof = -1;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expect = probs[i] * static_cast<double>(n);
    if (expect < 5) continue;  // too rare to test
    chi += (counts[i] - expect) * (counts[i] - expect) / expect;
    ++*dof;
  }
  return chi;
}

std::vector<double> Softmax(std::span<const float> logits) {
  std::vector<double> p(logits.begin(), logits.end());
  const double top = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& x : p) sum += x = std::exp(x - top);
  for (double& x : p) x /= sum;
  return p;
}

TEST(SpeculativeSampling, KeepsTheTargetDistribution) {
  auto spec = model::LookupShape(model::Arch::kQwen3_5, "tiny", 16);
  ASSERT_TRUE(spec.ok());
  auto m = model::MakeRandomModel(*spec, DType::kF32, 3);
  ASSERT_TRUE(m.ok());
  auto engine = MakeEngine(*m, 1, 16);
  const std::vector<int32_t> prompt = Tokens(12, 16, 6);
  Sequence seq = engine->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine->Prefill(seq, std::span(prompt).first(11), {}, &r).ok());
  const Snapshot start = seq.Snap();
  // The distributions to expect: after the last prompt token, and after the draft.
  const int32_t draft = 5;
  std::vector<float> logits;
  const std::vector<int32_t> run{prompt.back(), draft, 9};
  RollbackLog log;
  {
    auto s = engine->Admit(*start.kv, start.recurrent.get());
    const VerifyRun vr{&*s, run, &log};
    ASSERT_TRUE(engine->Verify(std::span(&vr, 1), &logits).ok());
  }
  const std::vector<double> p0 = Softmax(std::span(logits).first(16));
  const std::vector<double> p1 = Softmax(std::span(logits).subspan(16, 16));
  ASSERT_GT(p0[draft], 0.02) << "the draft must be taken now and then";
  std::vector<int64_t> first(16, 0), second(16, 0);
  const std::vector<int32_t> drafts{draft, 9};
  for (uint64_t seed = 1; seed <= 4000; ++seed) {
    Sampler sampler(SamplingParams{.temperature = 1.0f, .seed = seed});
    auto s = engine->Admit(*start.kv, start.recurrent.get());
    const VerifyRun vr{&*s, run, &log};
    ASSERT_TRUE(engine->Verify(std::span(&vr, 1), &logits).ok());
    std::vector<int32_t> taken;
    TakeVerified(drafts, logits, 16, [&](int64_t, std::span<const float> row) -> int64_t {
      taken.push_back(sampler.Next(row));
      return taken.back();
    });
    ++first[taken[0]];
    if (taken.size() > 1) ++second[taken[1]];
  }
  int64_t dof = 0;
  const double chi0 = ChiSquare(first, p0, &dof);
  EXPECT_LT(chi0, dof + 6 * std::sqrt(2.0 * dof)) << "first token, " << dof << " degrees of freedom";
  int64_t wrong_dof = 0;
  EXPECT_GT(ChiSquare(second, p0, &wrong_dof), 10 * wrong_dof) << "the test cannot tell the rows apart";
  const double chi1 = ChiSquare(second, p1, &dof);
  EXPECT_LT(chi1, dof + 6 * std::sqrt(2.0 * dof)) << "token after the draft, " << dof << " degrees of freedom";
  EXPECT_GT(std::accumulate(second.begin(), second.end(), int64_t{0}), 80);
}

}  // namespace
}  // namespace lineage::engine
