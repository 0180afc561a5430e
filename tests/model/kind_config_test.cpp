// Each layer kind's hyperparameters (model/layer_kinds.h, KindConfig) are
// read, written, checked and fingerprinted by the kind itself. Here every
// architecture's tiny shape is written as config.json and as GGUF metadata
// and read back: every kind's fingerprint values (all of its fields) come
// back as written, so a field a kind's writer leaves out, or a reader that
// misses it, fails here; so do the layers' (mixer, feed-forward) pairs the
// readers and the kinds' refinements make. And each kind's check refuses
// its own broken field.
#include <gtest/gtest.h>

#include <cmath>

#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/json_field.h"
#include "model/layer_kinds.h"
#include "test_util.h"

namespace lineage::model {
namespace {

using testing_util::Write;

// Kind by kind, the values `got` holds are those of `want`; GGUF stores
// floats as f32, so they agree to its precision.
void ExpectSameKindFields(const ModelConfig& got, const ModelConfig& want, const std::string& form) {
  const std::vector<const KindConfig*>& kinds = KindConfigs();
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (!kinds[k]->fingerprint) continue;
    const std::vector<double> g = kinds[k]->fingerprint(got), w = kinds[k]->fingerprint(want);
    ASSERT_EQ(g.size(), w.size()) << form << ", kind config " << k;
    for (size_t i = 0; i < g.size(); ++i)
      EXPECT_NEAR(g[i], w[i], 1e-6 * std::max(1.0, std::abs(w[i]))) << form << ", kind config " << k << ", value " << i;
  }
}

class KindConfigRoundTrip : public ::testing::TestWithParam<Arch> {};

TEST_P(KindConfigRoundTrip, EveryKindsFieldsReadBackFromBothFileForms) {
  auto spec = LookupShape(GetParam(), "tiny");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const ModelConfig& want = spec->config;
  const std::string tag = std::string("kind_config_") + ArchName(GetParam());

  const std::string hf_dir = Write(*spec, FileFormat::kSafetensors, DType::kBF16, 3, tag + "_hf");
  auto json = ReadJsonFile(hf_dir + "/config.json");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  auto from_hf = ParseHfConfig(*json, hf_dir + "/config.json");
  ASSERT_TRUE(from_hf.ok()) << from_hf.status().ToString();
  ExpectSameKindFields(*from_hf, want, "config.json");
  EXPECT_TRUE(from_hf->layers == want.layers) << "config.json: the layers' kinds";

  const std::string gguf_path = Write(*spec, FileFormat::kGguf, DType::kBF16, 3, tag + ".gguf");
  auto file = GgufFile::Open(gguf_path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto from_gguf = ParseGgufConfig(*file);
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().ToString();
  // The one field the forms differ in by design: Qwen3.5's converter tiles
  // the GDN value heads (spec §2.4).
  EXPECT_EQ(from_gguf->delta.v_head_order, GgufTilesVHeads(want.arch) ? VHeadOrder::kTiled : VHeadOrder::kGrouped);
  from_gguf->delta.v_head_order = want.delta.v_head_order;
  ExpectSameKindFields(*from_gguf, want, "GGUF");
  EXPECT_TRUE(from_gguf->layers == want.layers) << "GGUF: the layers' kinds";
}

// The pairs each architecture's tiny shape is made of, as the kinds refine
// them: glm_dsa's latent layers are sparse, Kimi's first FFN is dense.
TEST(KindConfigLayers, RefinementsGiveEachArchitectureItsPairs) {
  auto glm = LookupShape(Arch::kGlmDsa, "tiny");
  ASSERT_TRUE(glm.ok());
  for (const LayerPair& p : glm->config.layers) EXPECT_EQ(p.mixer, MixerKind::kSparseLatent);
  EXPECT_EQ(glm->config.mixer(glm->config.num_layers), MixerKind::kLatent);  // the MTP block drafts densely
  EXPECT_EQ(glm->config.layers.back().ffn, FfnKind::kDeepseekMoe);
  auto kimi = LookupShape(Arch::kKimiLinear, "tiny");
  ASSERT_TRUE(kimi.ok());
  EXPECT_EQ(kimi->config.layers[0], (LayerPair{MixerKind::kKimiDelta, FfnKind::kDense}));
  EXPECT_EQ(kimi->config.layers[3], (LayerPair{MixerKind::kLatent, FfnKind::kDeepseekMoe}));
  auto qwen = LookupShape(Arch::kQwen3_5Moe, "tiny");
  ASSERT_TRUE(qwen.ok());
  EXPECT_EQ(qwen->config.layers[0], (LayerPair{MixerKind::kGatedDeltaNet, FfnKind::kMoe}));
  EXPECT_EQ(qwen->config.layers[3], (LayerPair{MixerKind::kAttention, FfnKind::kMoe}));
}

INSTANTIATE_TEST_SUITE_P(AllArchs, KindConfigRoundTrip, ::testing::ValuesIn(kAllArchs),
                         [](const auto& info) { return std::string(ArchName(info.param)); });

// A broken field of each kind is refused by that kind's check, naming it.
TEST(KindConfigCheck, EachKindRefusesItsOwnBrokenField) {
  struct Breakage {
    Arch arch;
    void (*brake)(ModelConfig&);
    const char* words;
  };
  const Breakage cases[] = {
      {Arch::kQwen3_5, [](ModelConfig& c) { c.delta.v_heads = 3; }, "not a multiple"},
      {Arch::kQwen3_5, [](ModelConfig& c) { c.delta.conv_kernel = 0; }, "conv kernel"},
      {Arch::kKimiLinear, [](ModelConfig& c) { c.delta.v_dim = 16; }, "KDA needs as many key as value heads"},
      {Arch::kKimiK3, [](ModelConfig& c) { c.delta.gate_lower_bound = 1; }, "gate lower bound"},
      {Arch::kKimiLinear, [](ModelConfig& c) { c.mla.kv_lora_rank = 33; }, "is odd"},
      {Arch::kGlmDsa, [](ModelConfig& c) { c.mla.yarn_factor = 0.5; }, "YaRN factor"},
      {Arch::kQwen3_5Moe, [](ModelConfig& c) { c.experts.per_token = 9; }, "experts_per_token"},
      {Arch::kDeepseek32, [](ModelConfig& c) { c.experts.groups = 3; }, "do not split into 3 groups"},
      {Arch::kKimiK3, [](ModelConfig& c) { c.situ.beta = -1; }, "SiTU betas"},
      {Arch::kQwen3_5, [](ModelConfig& c) { c.situ.beta = 4; }, "Kimi K3 only"},
  };
  for (const Breakage& b : cases) {
    auto spec = LookupShape(b.arch, "tiny");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    ModelConfig c = spec->config;
    c.source_path = "broken";
    ASSERT_TRUE(ValidateConfig(c).ok()) << ArchName(b.arch) << ": " << ValidateConfig(c).ToString();
    b.brake(c);
    const Status s = ValidateConfig(c);
    EXPECT_FALSE(s.ok()) << ArchName(b.arch) << ": " << b.words;
    EXPECT_NE(s.ToString().find(b.words), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace lineage::model
