// The MTP (NextN) block as a draft head, on every architecture whose files
// carry one: its drafts equal the plain reference's (ReferenceMtpDrafts:
// the block over rows written from scratch in double precision), after a
// chunked prefill, decode steps and verification steps filled its KV rows;
// greedy decoding with MTP drafts gives decoding's tokens, and the sequence
// left behind restores to a cold prefill's logits.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/sampler.h"
#include "engine/speculation.h"
#include "engine_test_util.h"
#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "tools/spec_bench.h"

namespace lineage::engine {
namespace {

using testing::ColdPrefill;
using testing::MaxRelError;
using testing::Tokens;

std::shared_ptr<const model::Model> TinyMtpModel(model::Arch arch) {
  auto spec = model::LookupShape(arch, "tiny");
  EXPECT_TRUE(spec.ok());
  spec->config.mtp_layers = 1;
  auto m = model::MakeRandomModel(*spec, DType::kF32, 21);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

std::unique_ptr<Engine> MtpEngine(std::shared_ptr<const model::Model> m, int64_t chunk, bool mtp = true) {
  EngineOptions o;
  o.num_threads = 2;
  o.mtp = mtp;
  o.prefill_chunk_tokens = chunk;
  auto e = Engine::Create(std::move(m), o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(*e);
}

class Mtp : public ::testing::TestWithParam<model::Arch> {
 protected:
  void SetUp() override {
    model_ = TinyMtpModel(GetParam());
    ASSERT_TRUE(model_->weights.mtp.valid()) << model_->weights.mtp_unavailable;
    engine_ = MtpEngine(model_, 16);
  }
  int64_t vocab() const { return model_->config.vocab; }

  // The engine's k drafts after `seq` + `token` equal the reference's, up to
  // the first draft whose reference top two are closer than rounding can
  // tell apart (from there the two chains may differ).
  void ExpectDraftsMatchReference(Sequence& seq, const std::vector<int32_t>& history, int32_t token, int64_t k) {
    std::vector<int32_t> drafts;
    const int64_t before = seq.num_tokens();
    const MtpDraftRun run{&seq, token, k, &drafts};
    ASSERT_TRUE(engine_->DraftMtp(std::span(&run, 1)).ok());
    EXPECT_EQ(seq.num_tokens(), before);
    ASSERT_EQ(static_cast<int64_t>(drafts.size()), k);
    std::vector<int32_t> all = history;
    all.push_back(token);
    auto want = model::ReferenceMtpDrafts(*model_, all, k);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    for (int64_t d = 0; d < k; ++d) {
      std::vector<double> row = (*want)[d];
      const int32_t best = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
      std::vector<double> sorted = row;
      std::sort(sorted.rbegin(), sorted.rend());
      const double range = sorted.front() - sorted.back();
      if (sorted[0] - sorted[1] < 1e-4 * range) return;  // a near tie
      EXPECT_EQ(drafts[d], best) << "draft " << d << " after " << all.size() << " tokens";
      if (drafts[d] != best) return;
      ++checked_;
    }
  }

  std::shared_ptr<const model::Model> model_;
  std::unique_ptr<Engine> engine_;
  int64_t checked_ = 0;
};

TEST_P(Mtp, DraftsEqualTheReferenceAfterPrefillDecodeAndVerify) {
  std::vector<int32_t> history = Tokens(37, vocab(), 3);  // three prefill steps of 16
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine_->Prefill(seq, history, {}, &r).ok());
  int32_t token = Argmax(r.logits);
  ExpectDraftsMatchReference(seq, history, token, 4);

  std::vector<float> logits;
  for (int i = 0; i < 3; ++i) {  // decode steps fill one row each
    Sequence* one[] = {&seq};
    ASSERT_TRUE(engine_->Decode(one, std::span(&token, 1), &logits).ok());
    history.push_back(token);
    token = Argmax(logits);
  }
  ExpectDraftsMatchReference(seq, history, token, 3);

  // A verification step of 1 + 3 tokens, of which two are kept.
  SpecOptions so;
  so.type = SpecType::kMtp;
  Speculator spec(so);
  const std::vector<int32_t> run{token, 5, 6, 7};
  const int64_t start = seq.num_tokens();
  const VerifyRun vr = spec.Run(&seq, run);
  ASSERT_TRUE(engine_->Verify(std::span(&vr, 1), &logits).ok());
  spec.Keep(*engine_, seq, start, 2, 4);
  history.insert(history.end(), {token, 5});
  token = 9;
  ExpectDraftsMatchReference(seq, history, token, 3);
  EXPECT_GE(checked_, 5);
}

TEST_P(Mtp, GreedyWithMtpDraftsEqualsDecodingAndRestoresCold) {
  const std::vector<int32_t> prompt = Tokens(29, vocab(), 7);
  const int64_t n = 24;
  // Plain greedy decoding on the same engine.
  std::vector<int32_t> want;
  {
    Sequence seq = engine_->NewSequence();
    PrefillResult r;
    ASSERT_TRUE(engine_->Prefill(seq, prompt, {}, &r).ok());
    want.push_back(Argmax(r.logits));
    std::vector<float> logits;
    while (static_cast<int64_t>(want.size()) < n) {
      Sequence* one[] = {&seq};
      ASSERT_TRUE(engine_->Decode(one, std::span(&want.back(), 1), &logits).ok());
      want.push_back(Argmax(logits));
    }
  }
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine_->Prefill(seq, prompt, {}, &r).ok());
  std::vector<int32_t> got{Argmax(r.logits)};
  SpecOptions so;
  so.type = SpecType::kMtp;
  Speculator spec(so);
  std::vector<float> logits;
  std::vector<int32_t> drafts;
  while (static_cast<int64_t>(got.size()) < n) {
    const int64_t k = std::min<int64_t>(3, n - static_cast<int64_t>(got.size()));
    const MtpDraftRun dr{&seq, got.back(), k, &drafts};
    ASSERT_TRUE(engine_->DraftMtp(std::span(&dr, 1)).ok());
    std::vector<int32_t> run{got.back()};
    run.insert(run.end(), drafts.begin(), drafts.end());
    const int64_t start = seq.num_tokens();
    const VerifyRun vr = spec.Run(&seq, run);
    ASSERT_TRUE(engine_->Verify(std::span(&vr, 1), &logits).ok());
    const int64_t rows = TakeVerified(drafts, logits, vocab(), [&](int64_t, std::span<const float> row) {
      got.push_back(Argmax(row));
      return static_cast<int64_t>(got.size()) >= n ? -1 : got.back();
    });
    spec.Keep(*engine_, seq, start, rows, static_cast<int64_t>(run.size()));
  }
  EXPECT_EQ(got, want);
  EXPECT_GT(spec.proposed(), 0);

  std::vector<int32_t> all = prompt;
  all.insert(all.end(), want.begin(), want.end() - 1);
  testing::ExpectRestoreEqualsCold(*engine_, seq, all);
}

TEST_P(Mtp, TrunkLogitsEqualAnEngineWithoutTheBlock) {
  auto plain = MtpEngine(model_, 16, false);
  const std::vector<int32_t> prompt = Tokens(40, vocab(), 4);
  EXPECT_EQ(ColdPrefill(*engine_, prompt), ColdPrefill(*plain, prompt));
  EXPECT_EQ(engine_->kv_layout().num_layers, plain->kv_layout().num_layers + 1);
}

INSTANTIATE_TEST_SUITE_P(Archs, Mtp,
                         ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3_5Moe, model::Arch::kQwen3Next,
                                           model::Arch::kGlmDsa, model::Arch::kDeepseek32),
                         [](const auto& info) { return std::string(model::ArchName(info.param)); });

TEST(MtpEngine, TheSpeculativeBenchPaysForTheBlockAndStaysExact) {
  // RunSpecBench fails when any drafted run's tokens differ from the record.
  auto m = TinyMtpModel(model::Arch::kQwen3_5Moe);
  auto plain = MtpEngine(m, 64, false);
  auto mtp = MtpEngine(m, 64);
  SpecBenchOptions o;
  o.prompt_tokens = 24;
  o.gen_tokens = 12;
  o.drafts = 3;
  o.acceptance = {0.0, 1.0};
  o.repeats = 1;
  auto r = RunSpecBench(*plain, o, mtp.get());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->mtp_decode_tok_s, 0);
  EXPECT_GT(r->mtp_draft_cost, 0);
  EXPECT_GE(r->mtp_accepted, 0);
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[0].accepted, 0);
  EXPECT_EQ(r->rows[1].accepted, 1);
  EXPECT_TRUE(r->ToJson().contains("mtp"));
}

TEST(MtpEngine, RefusedWithoutTheBlock) {
  EngineOptions o;
  o.mtp = true;
  auto e = Engine::Create(testing::TinyModel(model::Arch::kQwen3_5), o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("multi-token-prediction"), std::string::npos);
  auto plain = testing::MakeEngine(testing::TinyModel(model::Arch::kQwen3_5));
  Sequence seq = plain->NewSequence();
  std::vector<int32_t> drafts;
  const MtpDraftRun run{&seq, 1, 2, &drafts};
  EXPECT_FALSE(plain->DraftMtp(std::span(&run, 1)).ok());
}

}  // namespace
}  // namespace lineage::engine
