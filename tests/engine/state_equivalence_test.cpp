// The engine gives the same logits however a prompt reaches it: one chunk,
// many chunks with forced boundaries, token by token, restored from a
// snapshot or from a checkpoint + borrowed pages, alone or batched.
// Tolerance: 1e-4 relative with fp32 KV pages (fp32 weights; the paths differ
// only in float summation order — chunked vs recurrent delta rule, Gemm row
// counts); 2e-3 with bf16 pages, where such differences can flip the
// rounding of a stored K or V element.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/paged_attention.h"
#include "engine_test_util.h"

namespace lineage::engine {
namespace {

using testing::ColdPrefill;
using testing::MakeEngine;
using testing::MaxRelError;
using testing::Tokens;
using testing::TinyModel;

struct StateCase {
  model::Arch arch;
  DType kv_dtype;
};

class StateEquivalence : public ::testing::TestWithParam<StateCase> {
 protected:
  void SetUp() override {
    engine_ = MakeEngine(TinyModel(GetParam().arch), 2, 16, GetParam().kv_dtype);
    kTol = GetParam().kv_dtype == DType::kF32 ? 1e-4 : 2e-3;
  }
  int64_t vocab() const { return engine_->config().vocab; }
  std::unique_ptr<Engine> engine_;
  double kTol = 1e-4;
};

TEST_P(StateEquivalence, OneChunkManyChunksAndTokenByTokenAgree) {
  const std::vector<int32_t> tokens = Tokens(150, vocab());
  const std::vector<float> one = ColdPrefill(*engine_, tokens);

  Sequence many = engine_->NewSequence();
  PrefillResult r;
  const int64_t forced[] = {13, 64, 100, 101};
  ASSERT_TRUE(engine_->Prefill(many, tokens, {.capture_at = forced, .chunk_tokens = 37}, &r).ok());
  EXPECT_LT(MaxRelError(r.logits, one), kTol);
  ASSERT_EQ(r.captures.size(), 4u);
  EXPECT_EQ(r.captures[0].num_tokens, 13);
  EXPECT_EQ(r.captures[3].num_tokens, 101);

  Sequence step = engine_->NewSequence();
  ASSERT_TRUE(engine_->Prefill(step, std::span(tokens).first(1), {}, &r).ok());
  std::vector<float> logits;
  for (size_t t = 1; t < tokens.size(); ++t) {
    Sequence* one_seq[] = {&step};
    ASSERT_TRUE(engine_->Decode(one_seq, std::span(tokens).subspan(t, 1), &logits).ok());
  }
  EXPECT_LT(MaxRelError(logits, one), kTol);
  EXPECT_EQ(step.num_tokens(), 150);
}

TEST_P(StateEquivalence, CaptureEqualsStateOfAPrefillOfThatLength) {
  if (engine_->recurrent_layout().num_layers == 0) GTEST_SKIP() << "attention-only model has no recurrent state";
  const std::vector<int32_t> tokens = Tokens(120, vocab());
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  const int64_t at[] = {77};
  ASSERT_TRUE(engine_->Prefill(seq, tokens, {.capture_at = at}, &r).ok());
  Sequence upto = engine_->NewSequence();
  PrefillResult r2;
  ASSERT_TRUE(engine_->Prefill(upto, std::span(tokens).first(77), {}, &r2).ok());
  const RecurrentState& want = upto.recurrent();
  const RecurrentState& got = *r.captures[0].recurrent;
  ASSERT_EQ(got.bytes(), want.bytes());
  const std::span<const float> a(got.conv(0), got.bytes() / 4), b(want.conv(0), want.bytes() / 4);
  EXPECT_LT(MaxRelError(a, b), kTol);
}

// Captures inside one step (the recurrent scan split there, the projections
// not): at the first tokens (the conv window still holds rows from before
// the step), mid-chunk, at a chunk's end and at the prompt's end, on a
// sequence that already holds tokens; each equals a cold prefill of that
// length, and the prompt's logits do not change.
TEST_P(StateEquivalence, CapturesInsideAStepEqualPrefillsOfThoseLengths) {
  if (engine_->recurrent_layout().num_layers == 0) GTEST_SKIP() << "attention-only model has no recurrent state";
  const std::vector<int32_t> tokens = Tokens(150, vocab());
  const int64_t head = 30;
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine_->Prefill(seq, std::span(tokens).first(head), {}, &r).ok());
  const int64_t at[] = {31, 32, 95, 110, 111, 150};
  ASSERT_TRUE(engine_->Prefill(seq, std::span(tokens).subspan(head), {.capture_at = at, .chunk_tokens = 80}, &r).ok());
  ASSERT_EQ(r.captures.size(), std::size(at));
  EXPECT_LT(MaxRelError(r.logits, ColdPrefill(*engine_, tokens)), kTol);
  for (size_t i = 0; i < std::size(at); ++i) {
    ASSERT_EQ(r.captures[i].num_tokens, at[i]);
    Sequence upto = engine_->NewSequence();
    PrefillResult r2;
    ASSERT_TRUE(engine_->Prefill(upto, std::span(tokens).first(at[i]), {}, &r2).ok());
    const RecurrentState& want = upto.recurrent();
    const RecurrentState& got = *r.captures[i].recurrent;
    ASSERT_EQ(got.bytes(), want.bytes());
    const std::span<const float> x(got.conv(0), got.bytes() / 4), y(want.conv(0), want.bytes() / 4);
    EXPECT_LT(MaxRelError(x, y), kTol) << "capture at " << at[i];
  }
}

TEST_P(StateEquivalence, RestoreFromSnapshotThenPrefillEqualsCold) {
  const std::vector<int32_t> tokens = Tokens(150, vocab());
  const std::vector<float> cold = ColdPrefill(*engine_, tokens);
  for (int64_t n : {64, 70, 149}) {  // at a page boundary, inside a page, one short of the end
    Sequence seq = engine_->NewSequence();
    PrefillResult r;
    ASSERT_TRUE(engine_->Prefill(seq, std::span(tokens).first(n), {}, &r).ok());
    Snapshot snap = seq.Snap();
    // The original sequence moves on with other tokens: the snapshot must not see it.
    const std::vector<int32_t> other = Tokens(20, vocab(), 99);
    ASSERT_TRUE(engine_->Prefill(seq, other, {}, &r).ok());
    for (int round = 0; round < 2; ++round) {  // the snapshot can be admitted again
      auto restored = engine_->Admit(*snap.kv, snap.recurrent.get());
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      EXPECT_EQ(restored->num_tokens(), n);
      ASSERT_TRUE(engine_->Prefill(*restored, std::span(tokens).subspan(n), {}, &r).ok());
      // No KV copy: the full pages are the snapshot's own; only the page the
      // restore point falls inside was copied, once.
      const int64_t page_tokens = engine_->kv_layout().page_tokens;
      for (int64_t p = 0; p < n / page_tokens; ++p) EXPECT_EQ(restored->kv().page(p).id(), snap.kv->page_ids()[p]);
      EXPECT_EQ(restored->kv().cow_copies(), n % page_tokens == 0 ? 0 : 1);
      EXPECT_LT(MaxRelError(r.logits, cold), kTol) << "n=" << n << " round " << round;
    }
  }
}

TEST_P(StateEquivalence, CheckpointPlusBorrowedPagesEqualsCold) {
  // Entry: prompt A of 130 tokens with a checkpoint at 70. New prompt B shares
  // A's first 70 tokens, then diverges.
  const std::vector<int32_t> a = Tokens(130, vocab());
  std::vector<int32_t> b(a.begin(), a.begin() + 70);
  const std::vector<int32_t> tail = Tokens(45, vocab(), 5);
  b.insert(b.end(), tail.begin(), tail.end());
  const std::vector<float> cold = ColdPrefill(*engine_, b);

  Sequence entry = engine_->NewSequence();
  PrefillResult r;
  const int64_t at[] = {70};
  ASSERT_TRUE(engine_->Prefill(entry, a, {.capture_at = at}, &r).ok());
  const Snapshot snap = entry.Snap();
  const Capture checkpoint = r.captures.at(0);

  auto restored = engine_->AdmitCheckpoint(checkpoint.recurrent.get(), 70, *snap.kv);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  ASSERT_TRUE(engine_->Prefill(*restored, std::span(b).subspan(70), {}, &r).ok());
  EXPECT_LT(MaxRelError(r.logits, cold), kTol);
  // The entry's own pages are untouched: restoring it whole still continues A.
  auto again = engine_->Admit(*snap.kv, snap.recurrent.get());
  ASSERT_TRUE(again.ok());
  std::vector<int32_t> a_more = a;
  a_more.push_back(3);
  const std::vector<float> cold_a = ColdPrefill(*engine_, a_more);
  ASSERT_TRUE(engine_->Prefill(*again, std::span(a_more).subspan(130), {}, &r).ok());
  EXPECT_LT(MaxRelError(r.logits, cold_a), kTol);
}

TEST_P(StateEquivalence, BatchedDecodeEqualsEachAlone) {
  const int64_t lengths[] = {5, 33, 64, 70};
  const int kSteps = 4;
  std::vector<Sequence> batched, alone;
  std::vector<std::vector<int32_t>> next;
  PrefillResult r;
  for (int i = 0; i < 4; ++i) {
    const std::vector<int32_t> p = Tokens(lengths[i], vocab(), 10 + i);
    batched.push_back(engine_->NewSequence());
    alone.push_back(engine_->NewSequence());
    ASSERT_TRUE(engine_->Prefill(batched.back(), p, {}, &r).ok());
    ASSERT_TRUE(engine_->Prefill(alone.back(), p, {}, &r).ok());
    next.push_back(Tokens(kSteps, vocab(), 20 + i));
  }
  for (int step = 0; step < kSteps; ++step) {
    std::vector<Sequence*> seqs;
    std::vector<int32_t> toks;
    for (int i = 0; i < 4; ++i) seqs.push_back(&batched[i]), toks.push_back(next[i][step]);
    std::vector<float> all;
    ASSERT_TRUE(engine_->Decode(seqs, toks, &all).ok());
    for (int i = 0; i < 4; ++i) {
      std::vector<float> one;
      Sequence* s[] = {&alone[i]};
      ASSERT_TRUE(engine_->Decode(s, std::span(toks).subspan(i, 1), &one).ok());
      const std::span<const float> row(all.data() + i * vocab(), vocab());
      EXPECT_LT(MaxRelError(row, one), kTol) << "sequence " << i << " step " << step;
    }
  }
}

TEST_P(StateEquivalence, RejectsBadInput) {
  Sequence seq = engine_->NewSequence();
  PrefillResult r;
  const int32_t bad[] = {1, static_cast<int32_t>(vocab())};
  EXPECT_EQ(engine_->Prefill(seq, bad, {}, &r).code(), StatusCode::kInvalidArgument);
  const int32_t good[] = {1, 2, 3};
  const int64_t outside[] = {5};
  EXPECT_EQ(engine_->Prefill(seq, good, {.capture_at = outside}, &r).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(seq.num_tokens(), 0);
  ASSERT_TRUE(engine_->Prefill(seq, good, {}, &r).ok());
  Snapshot snap = seq.Snap();
  EXPECT_EQ(engine_->AdmitCheckpoint(snap.recurrent.get(), 4, *snap.kv).status().code(), StatusCode::kOutOfRange);
  // Pages of the other KV element type are another layout: never admitted.
  auto other = MakeEngine(TinyModel(GetParam().arch), 2, 16,
                          GetParam().kv_dtype == DType::kF32 ? DType::kBF16 : DType::kF32);
  EXPECT_EQ(other->Admit(*snap.kv, snap.recurrent.get()).status().code(), StatusCode::kInvalidArgument);
  Sequence* twice[] = {&seq, &seq};
  std::vector<float> logits;
  EXPECT_EQ(engine_->Decode(twice, std::span(good).first(2), &logits).code(), StatusCode::kInvalidArgument);
}

// Past two parts of context (kDecodePartKeys) a decode row's attention is
// split by keys over the threads and merged: the step still agrees with a
// cold prefill of the same tokens, and gives the same logits bit for bit
// whatever the number of threads, alone or batched with a short sequence.
TEST(LongContextDecode, SplitAttentionAgreesWithPrefillAndIgnoresThreadsAndBatch) {
  for (DType kv : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(std::string(Info(kv).name));
    auto model = TinyModel(model::Arch::kQwen3_5);
    const int64_t n = 2 * kDecodePartKeys + 41;
    const std::vector<int32_t> tokens = Tokens(n, model->config.vocab, 7);
    std::vector<std::vector<float>> decoded;
    for (int threads : {1, 3}) {
      auto engine = MakeEngine(model, threads, 16, kv);
      const cache::PageTable layout_only(engine->kv_layout());
      ASSERT_EQ(KeyPartsOf({&layout_only, 0, 0, 0, 1.0f}, n - 1, 1).parts, 3) << "the last token's row is split in 3";
      const std::vector<float> cold = ColdPrefill(*engine, tokens);
      Sequence seq = engine->NewSequence(), other = engine->NewSequence();
      PrefillResult r;
      ASSERT_TRUE(engine->Prefill(seq, std::span(tokens).first(n - 1), {}, &r).ok());
      ASSERT_TRUE(engine->Prefill(other, std::span(tokens).first(9), {}, &r).ok());
      std::vector<float> alone, batched;
      {
        Snapshot snap = seq.Snap();
        auto admitted = engine->Admit(*snap.kv, snap.recurrent.get());
        ASSERT_TRUE(admitted.ok());
        Sequence* one[] = {&*admitted};
        ASSERT_TRUE(engine->Decode(one, std::span(tokens).subspan(n - 1, 1), &alone).ok());
      }
      Sequence* both[] = {&other, &seq};
      const int32_t next[] = {tokens[9], tokens[n - 1]};
      ASSERT_TRUE(engine->Decode(both, next, &batched).ok());
      EXPECT_LT(MaxRelError(alone, cold), kv == DType::kF32 ? 1e-4 : 2e-3) << threads << " threads";
      const std::vector<float> row(batched.begin() + model->config.vocab, batched.end());
      EXPECT_EQ(row, alone) << threads << " threads: batched differs from alone";
      decoded.push_back(alone);
    }
    EXPECT_EQ(decoded[0], decoded[1]) << "1 and 3 threads differ";
  }
}

// A warm turn's few new rows over a long context are split by keys too:
// prefilled after a restore they agree with a cold prefill of the whole, and
// give the same logits bit for bit whatever the number of threads.
TEST(LongContextWarmTurn, SplitAttentionAgreesWithPrefillAndIgnoresThreads) {
  for (DType kv : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(std::string(Info(kv).name));
    auto model = TinyModel(model::Arch::kQwen3_5);
    const int64_t n = 2 * kDecodePartKeys + 41, turn = 30;
    const std::vector<int32_t> tokens = Tokens(n, model->config.vocab, 11);
    std::vector<std::vector<float>> warm;
    for (int threads : {1, 3}) {
      auto engine = MakeEngine(model, threads, 16, kv);
      const cache::PageTable layout_only(engine->kv_layout());
      ASSERT_EQ(KeyPartsOf({&layout_only, 0, 0, 0, 1.0f}, n - turn, turn).parts, 3) << "the turn is split in 3";
      const std::vector<float> cold = ColdPrefill(*engine, tokens);
      Sequence seq = engine->NewSequence();
      PrefillResult r;
      ASSERT_TRUE(engine->Prefill(seq, std::span(tokens).first(n - turn), {}, &r).ok());
      Snapshot snap = seq.Snap();
      auto admitted = engine->Admit(*snap.kv, snap.recurrent.get());
      ASSERT_TRUE(admitted.ok());
      ASSERT_TRUE(engine->Prefill(*admitted, std::span(tokens).subspan(n - turn), {}, &r).ok());
      EXPECT_LT(MaxRelError(r.logits, cold), kv == DType::kF32 ? 1e-4 : 2e-3) << threads << " threads";
      warm.push_back(r.logits);
    }
    EXPECT_EQ(warm[0], warm[1]) << "1 and 3 threads differ";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, StateEquivalence,
                         ::testing::Values(StateCase{model::Arch::kQwen3_5, DType::kF32},
                                           StateCase{model::Arch::kQwen3, DType::kF32},
                                           StateCase{model::Arch::kQwen3_5, DType::kBF16},
                                           StateCase{model::Arch::kQwen3, DType::kBF16},
                                           StateCase{model::Arch::kQwen3_5Moe, DType::kF32},
                                           StateCase{model::Arch::kQwen3Next, DType::kF32},
                                           StateCase{model::Arch::kKimiLinear, DType::kF32},
                                           StateCase{model::Arch::kKimiLinear, DType::kBF16},
                                           StateCase{model::Arch::kGlmDsa, DType::kF32},
                                           StateCase{model::Arch::kKdaDsa, DType::kF32},
                                           StateCase{model::Arch::kKdaDsa, DType::kBF16}),
                         [](const auto& info) {
                           return std::string(model::ArchName(info.param.arch)) + "_kv_" +
                                  std::string(Info(info.param.kv_dtype).name);
                         });

}  // namespace
}  // namespace lineage::engine
