#include <gtest/gtest.h>

#include <cmath>

#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "model/shapes.h"

namespace lineage::model {
namespace {

TEST(Shapes, TinyQwen35ExercisesThePitfalls) {
  auto s = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const ModelConfig& c = s->config;
  EXPECT_EQ(c.hidden, 128);
  EXPECT_EQ(c.num_layers, 8);
  EXPECT_EQ(c.num_full_layers(), 2);
  EXPECT_EQ(c.mixer(3), MixerKind::kAttention);
  EXPECT_EQ(c.mixer(7), MixerKind::kAttention);
  EXPECT_EQ(c.mixer(0), MixerKind::kGatedDeltaNet);
  EXPECT_NE(c.head_dim, c.hidden / c.num_heads);
  EXPECT_EQ(c.rope_dims * 4, c.head_dim);
  EXPECT_EQ(c.delta.v_heads / c.delta.k_heads, 2);
  EXPECT_EQ(c.delta.conv_dim(), 2 * 2 * 32 + 4 * 32);
}

TEST(Shapes, RealShapesMatchTheSpecTable) {
  auto q35 = LookupShape(Arch::kQwen3_5, "qwen3.5-0.8b");
  ASSERT_TRUE(q35.ok());
  EXPECT_EQ(q35->config.vocab, 248320);
  EXPECT_EQ(q35->config.num_full_layers(), 6);
  EXPECT_EQ(q35->config.num_linear_layers(), 18);
  EXPECT_EQ(q35->config.kv_bytes_per_token(), 6 * 2 * 2 * 256 * 4);
  auto q3 = LookupShape(Arch::kQwen3, "qwen3-0.6b", 4096);
  ASSERT_TRUE(q3.ok());
  EXPECT_EQ(q3->config.vocab, 4096);
  EXPECT_EQ(q3->config.num_layers, 28);
  EXPECT_EQ(q3->config.head_dim, 128);
  EXPECT_FALSE(LookupShape(Arch::kQwen3, "qwen3.5-0.8b").ok());
  EXPECT_EQ(LookupShape(Arch::kQwen3, "huge").status().code(), StatusCode::kNotFound);
}

// Activations stay O(1) through every layer and the logits are not saturated.
void ExpectSaneActivations(Arch arch) {
  auto spec = LookupShape(arch, "tiny");
  ASSERT_TRUE(spec.ok());
  auto m = MakeRandomModel(*spec, DType::kF32, 7);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::vector<int32_t> tokens;
  for (int i = 0; i < 24; ++i) tokens.push_back((i * 37 + 5) % 1024);
  ReferenceTrace trace;
  auto logits = ReferenceForward(**m, tokens, &trace);
  ASSERT_TRUE(logits.ok());
  ASSERT_EQ(trace.layer_rms.size(), static_cast<size_t>(spec->config.num_layers));
  for (size_t l = 0; l < trace.layer_rms.size(); ++l) {
    EXPECT_GT(trace.layer_rms[l], 0.05) << "layer " << l;
    EXPECT_LT(trace.layer_rms[l], 10.0) << "layer " << l;
  }
  for (const auto& row : *logits) {
    double mean = 0, mx = -1e300;
    for (double x : row) mean += x, mx = std::max(mx, x);
    mean /= row.size();
    double var = 0, z = 0;
    for (double x : row) var += (x - mean) * (x - mean), z += std::exp(x - mx);
    double sd = std::sqrt(var / row.size());
    EXPECT_GT(sd, 0.3);
    EXPECT_LT(sd, 10.0);
    EXPECT_LT(1.0 / z, 0.9) << "top probability saturated";
  }
}

TEST(RandomModel, Qwen35ActivationsStaySane) { ExpectSaneActivations(Arch::kQwen3_5); }
TEST(RandomModel, Qwen3ActivationsStaySane) { ExpectSaneActivations(Arch::kQwen3); }

TEST(RandomModel, SameSeedSameLogitsOtherSeedDiffers) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  auto a = MakeRandomModel(*spec, DType::kBF16, 1);
  auto b = MakeRandomModel(*spec, DType::kBF16, 1);
  auto c = MakeRandomModel(*spec, DType::kBF16, 2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  std::vector<int32_t> tokens = {1, 2, 3};
  auto la = ReferenceForward(**a, tokens), lb = ReferenceForward(**b, tokens), lc = ReferenceForward(**c, tokens);
  EXPECT_EQ(*la, *lb);
  EXPECT_NE(*la, *lc);
  EXPECT_FALSE(ReferenceForward(**a, {1024}).ok());
}

}  // namespace
}  // namespace lineage::model
