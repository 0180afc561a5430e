// The plain reference forward of the latent-attention families against files
// llama.cpp wrote and the logits it computed from them
// (../shared/data/models/tiny-glm-dsa.gguf: q-LoRA MLA with interleaved
// RoPE, the lightning indexer with top_k 8 < 40 prompt tokens, GLM-5.2's
// shared indexer layers, the sigmoid-routed MoE with a shared expert). The
// reference runs in double precision, so it matches llama.cpp's f32 forward
// to well within 1e-3, and its 8 greedy tokens exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/load_model.h"
#include "oracle_files.h"
#include "tools/reference_forward.h"

namespace lineage::model {
namespace {

using oracle_files::Argmax;
using oracle_files::ModelsDir;
using oracle_files::ReadIds;
using oracle_files::ReadLogits;

TEST(LatentOracle, GlmDsaConfigIsReadFromTheFile) {
  const std::string path = ModelsDir() + "/tiny-glm-dsa.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelConfig& c = (*model)->config;
  EXPECT_EQ(c.arch, Arch::kGlmDsa);
  EXPECT_EQ(c.num_layers, 6);
  EXPECT_EQ(c.mla.q_lora_rank, 64);
  EXPECT_EQ(c.mla.kv_lora_rank, 64);
  EXPECT_EQ(c.mla.qk_nope_dim, 32);
  EXPECT_EQ(c.mla.qk_rope_dim, 16);
  EXPECT_EQ(c.mla.v_head_dim, 32);
  EXPECT_TRUE(c.mla.rope);
  EXPECT_EQ(c.indexer.heads, 32);
  EXPECT_EQ(c.indexer.dim, 64);
  EXPECT_EQ(c.indexer.top_k, 8);
  EXPECT_FALSE(c.indexer.rope_neox);
  EXPECT_EQ(c.indexer.norm_eps, 0.0);
  EXPECT_EQ(c.indexer.full, (std::vector<bool>{true, true, false, false, true, false}));
  int64_t indexer_layers = 0;  // the layers that cache an indexer key beside the latent row
  for (int64_t l = 0; l < c.num_layers; ++l) indexer_layers += SideFloats(c, l) == c.indexer.dim;
  EXPECT_EQ(indexer_layers, 3);
  EXPECT_EQ(c.experts.leading_dense_layers, 1);
  EXPECT_EQ(c.experts.count, 8);
  EXPECT_EQ(c.experts.per_token, 2);
  EXPECT_NEAR(c.experts.routed_scaling, 2.5, 1e-9);
  EXPECT_EQ(c.num_linear_layers(), 0);
  // 6 latent rows of 80 and 3 indexer keys of 64, f32.
  EXPECT_EQ(c.kv_bytes_per_token(), (6 * 80 + 3 * 64) * 4);
  EXPECT_EQ(c.recurrent_bytes(), 0);
  EXPECT_TRUE((*model)->weights.layers[4].mla.indexer.valid());
  EXPECT_FALSE((*model)->weights.layers[5].mla.indexer.valid());
}

// The reference's last logits within 1e-3 of llama.cpp's and its 8 greedy
// tokens exactly, on the oracle file `name`.
void ExpectReferenceMatchesOracle(const std::string& name) {
  const std::string base = ModelsDir() + "/" + name;
  if (!std::filesystem::exists(base + ".gguf")) GTEST_SKIP() << base << ".gguf is absent";
  SCOPED_TRACE(name);
  auto model = LoadModel(base + ".gguf");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<int32_t> tokens = ReadIds(ModelsDir() + "/prompt_ids.txt");
  const std::vector<float> want = ReadLogits(base + ".logits.f32");
  const std::vector<int32_t> want_greedy = ReadIds(base + ".greedy.txt");
  ASSERT_EQ(tokens.size(), 40u);
  ASSERT_EQ(want.size(), 1024u);
  ASSERT_EQ(want_greedy.size(), 8u);
  std::vector<int32_t> greedy;
  for (int step = 0; step < 8; ++step) {
    auto logits = ReferenceForward(**model, tokens);
    ASSERT_TRUE(logits.ok()) << logits.status().ToString();
    const std::vector<double>& last = logits->back();
    if (step == 0) {
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(last[i] - want[i]));
      EXPECT_LE(worst, 1e-3) << "max |logit - llama.cpp|";
      std::printf("  reference vs llama.cpp: max |d| %.2g\n", worst);
    }
    greedy.push_back(Argmax(last));
    tokens.push_back(greedy.back());
  }
  EXPECT_EQ(greedy, want_greedy);
}

TEST(LatentOracle, GlmDsaReferenceMatchesLlamaCpp) { ExpectReferenceMatchesOracle("tiny-glm-dsa"); }

TEST(LatentOracle, KimiK3ConfigIsReadFromTheFile) {
  const std::string path = ModelsDir() + "/tiny-kimi-k3.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const ModelConfig& c = (*model)->config;
  EXPECT_EQ(c.arch, Arch::kKimiK3);
  EXPECT_EQ(c.num_linear_layers(), 6);
  EXPECT_EQ(c.num_full_layers(), 2);
  EXPECT_EQ(c.delta.k_heads, 4);
  EXPECT_EQ(c.delta.k_dim, 64);
  EXPECT_EQ(c.delta.gate_lower_bound, -5.0);
  EXPECT_EQ(c.experts.latent, 64);
  EXPECT_EQ(c.situ.beta, 4.0);
  EXPECT_EQ(c.situ.linear_beta, 25.0);
  EXPECT_EQ(c.attn_res_block, 3);
  EXPECT_FALSE(c.mla.rope);
  const Weights& w = (*model)->weights;
  EXPECT_TRUE(w.layers[0].kda.g_full.valid());
  EXPECT_TRUE(w.layers[3].mla.out_gate.valid());
  EXPECT_TRUE(w.layers[3].moe.latent_down.valid());
  EXPECT_EQ(w.output_res_score.size(), 256u);
}

TEST(LatentOracle, KimiK3ReferenceMatchesLlamaCpp) { ExpectReferenceMatchesOracle("tiny-kimi-k3"); }

}  // namespace
}  // namespace lineage::model
