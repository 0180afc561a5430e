// The optimized forward against the double-precision ReferenceForward on
// tiny random models of both architectures. Prefill of a prompt and then
// token-by-token decode are compared at every position with the reference's
// logits. Stated tolerances (max |diff| / max |logit| of a row):
//   f32 weights: 1e-4 (fp32 summation only);
//   bf16 weights: 2e-2 (Gemm rounds activations to bf16 at >= 16 rows);
//   bf16 KV pages (f32 weights): 1e-2 (K and V rounded to bf16);
//   q8_0 weights: 0.2 (Gemm quantises every activation row to int8 per block
//   of 32, as GGML does; through 8 random layers that measures ~0.1 — a
//   wrong computation measures ~1).
#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace lineage::engine {
namespace {

using testing::TinyModel;
using testing::WorstErrorAgainstReference;

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
  tiled->config.delta.v_head_order = model::VHeadOrder::kTiled;
  EXPECT_LT(WorstErrorAgainstReference(tiled, 40, 30), 1e-4);
}

TEST(ReferenceEquivalence, Qwen35Bf16Kv) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3_5), 80, 70, DType::kBF16), 1e-2);
}

TEST(ReferenceEquivalence, Qwen3Bf16Kv) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kQwen3), 80, 70, DType::kBF16), 1e-2);
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
