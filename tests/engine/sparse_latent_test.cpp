// The sparse latent archs (glm-dsa, deepseek32 and the design's hybrid
// kda-dsa) on the optimized forward against the double-precision
// ReferenceForward, whose indexer scores every (query, key) pair and sorts
// them, and whose MLA expands every head's keys and values and masks the
// dense softmax to the selection (the fast path gathers the selected latent
// rows and never expands them): in-memory models, both file formats,
// prefill cut at random points, contexts far past top_k. Tolerance 1e-4
// relative (f32 weights and pages); a key selected wrongly measures ~1e-2
// and more.
#include <gtest/gtest.h>

#include <cmath>

#include "kinds/latent_attention/engine/latent_paths.h"
#include "engine/rope.h"
#include "engine_test_util.h"
#include "model/load_model.h"
#include "model/test_util.h"

namespace lineage::engine {
namespace {

using testing::MakeEngine;
using testing::TinyModel;
using testing::WorstErrorAgainstReference;

class SparseArch : public ::testing::TestWithParam<model::Arch> {};

// 90 tokens: top_k 16 drops most keys; two pages; then decode.
TEST_P(SparseArch, InMemoryModelMatchesReference) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(GetParam()), 90, 75), 1e-4);
}

TEST_P(SparseArch, LoadedFilesOfBothFormatsMatchReference) {
  auto spec = model::LookupShape(GetParam(), "tiny");
  ASSERT_TRUE(spec.ok());
  for (model::FileFormat f : {model::FileFormat::kSafetensors, model::FileFormat::kGguf}) {
    const bool gguf = f == model::FileFormat::kGguf;
    const std::string name = std::string(model::ArchName(GetParam())) + (gguf ? "_engine.gguf" : "_engine_hf");
    auto m = model::LoadModel(model::testing_util::Write(*spec, f, DType::kF32, 5, name));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_LT(WorstErrorAgainstReference(*m, 50, 40), 1e-4) << name;
  }
}

TEST_P(SparseArch, PrefillCutAtRandomPoints) {
  auto m = TinyModel(GetParam());
  auto engine = MakeEngine(m, 2, 4);
  testing::ExpectRandomPrefillCutsMatchReference(m, *engine, 110, 40, 1e-4);
}

// Every path of latent attention (latent_paths.h), forced for every run of
// several rows, against the reference: the absorbed rows, the block gather
// (sparse) and the expansion into per-head keys and values; dense (Kimi
// Linear) and sparse; prefill in chunks of 1 to 40 rows after up to 110
// tokens of context, so runs cross pages and top_k.
struct PathCase {
  model::Arch arch;
  LatentPath path;
};

class LatentPaths : public ::testing::TestWithParam<PathCase> {};

TEST_P(LatentPaths, EveryPathMatchesTheReference) {
  auto m = TinyModel(GetParam().arch);
  EngineOptions o;
  o.num_threads = 2;
  o.delta_chunked_min_tokens = 4;
  o.latent_path = GetParam().path;
  auto engine = Engine::Create(m, o);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  testing::ExpectRandomPrefillCutsMatchReference(m, **engine, 110, 40, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LatentPaths,
    ::testing::Values(PathCase{model::Arch::kKimiLinear, LatentPath::kAbsorbed},
                      PathCase{model::Arch::kKimiLinear, LatentPath::kExpanded},
                      PathCase{model::Arch::kGlmDsa, LatentPath::kAbsorbed},
                      PathCase{model::Arch::kGlmDsa, LatentPath::kBlockGather},
                      PathCase{model::Arch::kGlmDsa, LatentPath::kExpanded},
                      PathCase{model::Arch::kDeepseek32, LatentPath::kBlockGather},
                      PathCase{model::Arch::kDeepseek32, LatentPath::kExpanded},
                      PathCase{model::Arch::kKdaDsa, LatentPath::kExpanded},
                      PathCase{model::Arch::kKimiK3, LatentPath::kExpanded}),
    [](const auto& info) {
      std::string name = std::string(model::ArchName(info.param.arch)) + "_" + LatentPathName(info.param.path);
      for (char& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

// Kimi K3 (KDA with a bounded decay and a full-rank gate, gated NoPE MLA,
// the latent MoE, SiTU, Block AttnRes), a random tiny model in memory and
// written as GGUF, against the reference.
TEST(KimiK3, InMemoryAndGgufMatchReference) {
  EXPECT_LT(WorstErrorAgainstReference(TinyModel(model::Arch::kKimiK3), 90, 75), 1e-4);
  auto spec = model::LookupShape(model::Arch::kKimiK3, "tiny");
  ASSERT_TRUE(spec.ok());
  auto m = model::LoadModel(model::testing_util::Write(*spec, model::FileFormat::kGguf, DType::kF32, 5, "k3.gguf"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_LT(WorstErrorAgainstReference(*m, 50, 40), 1e-4);
}

TEST(KimiK3, PrefillCutAtRandomPoints) {
  auto m = TinyModel(model::Arch::kKimiK3);
  auto engine = MakeEngine(m, 2, 4);
  testing::ExpectRandomPrefillCutsMatchReference(m, *engine, 110, 40, 1e-4);
}

// DeepSeek-V3.2's YaRN (factor 40 over 4096 positions, mscale_all_dim 1;
// spec latent-attention §1.5): the score scale is the spec's 0.135234; at 64
// rotary dims pairs below 10 keep their angle, pairs above 23 divide it by
// 40, and the cos / sin gain is 1.
TEST(Yarn, DeepSeekV32ScaleAndRotaryPairs) {
  auto spec = model::LookupShape(model::Arch::kDeepseek32, "deepseek-v3.2");
  ASSERT_TRUE(spec.ok());
  const model::ModelConfig& c = spec->config;
  EXPECT_NEAR(c.mla.scale(), 0.135234, 1e-6);
  const Yarn yarn = LatentYarn(c);
  EXPECT_NEAR(yarn.gain, 1.0, 1e-12);
  std::vector<float> table(64);
  RopeTable(1000, 1, 64, c.rope_theta, table.data(), yarn);
  auto angle = [&](int i) { return 1000.0 * std::pow(1e4, -2.0 * i / 64.0); };
  EXPECT_NEAR(table[5], std::cos(angle(5)), 1e-6);
  EXPECT_NEAR(table[32 + 5], std::sin(angle(5)), 1e-6);
  EXPECT_NEAR(table[30], std::cos(angle(30) / 40), 1e-6);
  EXPECT_NEAR(table[32 + 30], std::sin(angle(30) / 40), 1e-6);
  // Between the two, a blend: pair 16 is (16 - 10) / 13 of the way to 1/40.
  const double keep = 1.0 - 6.0 / 13.0;
  EXPECT_NEAR(table[16], std::cos(keep * angle(16) + (1 - keep) * angle(16) / 40), 1e-6);
}

std::string ArchTestName(const ::testing::TestParamInfo<model::Arch>& info) {
  return model::ArchName(info.param);
}

INSTANTIATE_TEST_SUITE_P(Archs, SparseArch,
                         ::testing::Values(model::Arch::kGlmDsa, model::Arch::kDeepseek32, model::Arch::kKdaDsa),
                         ArchTestName);

}  // namespace
}  // namespace lineage::engine
