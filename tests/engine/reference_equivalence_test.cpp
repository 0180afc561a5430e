// The optimized forward against the double-precision ReferenceForward on
// tiny random models of both architectures. Prefill of a prompt and then
// token-by-token decode are compared at every position with the reference's
// logits. Stated tolerances (max |diff| / max |logit| of a row):
//   f32 weights: 1e-4 (fp32 summation only);
//   bf16 weights: 2e-2 (Gemm rounds activations to bf16 at >= 16 rows);
//   q8_0 weights: 0.2 (Gemm quantises every activation row to int8 per block
//   of 32, as GGML does; through 8 random layers that measures ~0.1 — a
//   wrong computation measures ~1).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "engine_test_util.h"
#include "model/reference_forward.h"

namespace lineage::engine {
namespace {

using testing::MakeEngine;
using testing::MaxRelError;
using testing::Tokens;
using testing::TinyModel;

// Prefills the first `prefill` tokens, decodes the rest one by one, and
// returns the worst relative error against the reference over all of them.
double WorstErrorAgainstReference(std::shared_ptr<const model::Model> m, int64_t num_tokens, int64_t prefill) {
  const std::vector<int32_t> tokens = Tokens(num_tokens, m->config.vocab);
  auto ref = model::ReferenceForward(*m, tokens);
  EXPECT_TRUE(ref.ok()) << ref.status().ToString();
  auto engine = MakeEngine(m);
  Sequence seq = engine->NewSequence();
  PrefillResult r;
  EXPECT_TRUE(engine->Prefill(seq, std::span(tokens).first(prefill), {}, &r).ok());
  double worst = MaxRelError(r.logits, (*ref)[prefill - 1]);
  std::vector<float> logits;
  for (int64_t t = prefill; t < num_tokens; ++t) {
    Sequence* one[] = {&seq};
    EXPECT_TRUE(engine->Decode(one, std::span(tokens).subspan(t, 1), &logits).ok());
    worst = std::max(worst, MaxRelError(logits, (*ref)[t]));
  }
  std::printf("  %s %s: max relative logit error %.3g\n", model::ArchName(m->config.arch),
              std::string(Info(m->weights.embed.dtype).name).c_str(), worst);
  return worst;
}

TEST(ReferenceEquivalence, Qwen35F32) {
  // 70 prompt tokens: crosses a KV page boundary and a delta-rule chunk.
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3_5), 80, 70), 1e-4);
}

TEST(ReferenceEquivalence, Qwen3F32) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3), 80, 70), 1e-4);
}

TEST(ReferenceEquivalence, Qwen35TiledVHeadOrder) {
  // The same weights read as a Qwen3.5 GGUF would order them: value head h
  // uses key head h mod H_k. The reference follows the config too.
  auto tiled = std::make_shared<model::Model>(*TinyModel(model::Arch::kQwen3_5));
  tiled->config.v_head_order = model::VHeadOrder::kTiled;
  EXPECT_LT(WorstErrorAgainstReference(tiled, 40, 30), 1e-4);
}

TEST(ReferenceEquivalence, Qwen35Bf16) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3_5, DType::kBF16), 40, 30), 2e-2);
}

TEST(ReferenceEquivalence, Qwen3Bf16) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3, DType::kBF16), 40, 30), 2e-2);
}

TEST(ReferenceEquivalence, Qwen35Q8) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3_5, DType::kQ8_0), 40, 30), 0.2);
}

}  // namespace
}  // namespace lineage::engine
