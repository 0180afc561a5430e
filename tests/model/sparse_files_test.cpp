// Sparse latent model files (spec latent-attention §3): mkmodel writes
// glm-dsa GGUF files with llama.cpp's tensor names and keys (the same set as
// the file llama.cpp's own gguf package wrote, tiny-glm-dsa.gguf), and
// config.json as GLM-5 and DeepSeek-V3.2 publish it; both formats hold the
// same model; files with a broken indexer layout or an unsupported rope
// scaling are clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "gguf_copy.h"
#include "model/gguf_config.h"
#include "model/gguf_file.h"
#include "model/load_model.h"
#include "tools/reference_forward.h"
#include "test_util.h"

namespace lineage::model {
namespace {

std::set<std::string> TensorNames(const GgufFile& g) {
  std::set<std::string> out;
  for (const GgufTensorInfo& t : g.tensors()) out.insert(t.name);
  return out;
}

std::map<std::string, GgufType> ArchKeys(const GgufFile& g, const std::string& prefix) {
  std::map<std::string, GgufType> out;
  for (const auto& [k, v] : g.metadata())
    if (k.rfind(prefix, 0) == 0) out[k] = v.type;
  return out;
}

// Our tiny shape of `arch` has the oracle file's layer layout, so its GGUF
// holds the same tensor names, and every key of the oracle with its type.
void ExpectNamesAndKeysOf(Arch arch, const std::string& oracle_name, const std::string& prefix) {
  const std::string oracle_path = std::string(LINEAGE_SHARED_DATA) + "/models/" + oracle_name;
  if (!std::filesystem::exists(oracle_path)) GTEST_SKIP() << oracle_path << " is absent";
  auto oracle = GgufFile::Open(oracle_path);
  ASSERT_TRUE(oracle.ok());
  ModelSpec spec = *LookupShape(arch, "tiny");
  const std::string path =
      testing_util::Write(spec, FileFormat::kGguf, DType::kF32, 3, std::string(ArchName(arch)) + "_names.gguf");
  auto ours = GgufFile::Open(path);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_EQ(TensorNames(*ours), TensorNames(*oracle));
  const auto want = ArchKeys(*oracle, prefix), got = ArchKeys(*ours, prefix);
  for (const auto& [key, type] : want) {
    auto it = got.find(key);
    ASSERT_NE(it, got.end()) << key;
    EXPECT_EQ(it->second, type) << key;
  }
}

TEST(SparseFiles, GgufNamesAndKeysAreLlamaCpps) {
  ExpectNamesAndKeysOf(Arch::kGlmDsa, "tiny-glm-dsa.gguf", "glm-dsa.");
  ExpectNamesAndKeysOf(Arch::kKimiK3, "tiny-kimi-k3.gguf", "kimi-k3.");
}

TEST(SparseFiles, HfConfigsAreThePublishedOnes) {
  for (Arch arch : {Arch::kGlmDsa, Arch::kDeepseek32}) {
    ModelSpec spec = *LookupShape(arch, "tiny");
    const std::string dir =
        testing_util::Write(spec, FileFormat::kSafetensors, DType::kBF16, 3, std::string(ArchName(arch)) + "_hf_cfg");
    std::ifstream in(dir + "/config.json");
    const nlohmann::json j = nlohmann::json::parse(in);
    const bool glm = arch == Arch::kGlmDsa;
    EXPECT_EQ(j["architectures"][0], glm ? "GlmMoeDsaForCausalLM" : "DeepseekV32ForCausalLM");
    EXPECT_EQ(j["model_type"], glm ? "glm_moe_dsa" : "deepseek_v32");
    EXPECT_EQ(j["index_topk"], 16);
    EXPECT_EQ(j["index_n_heads"], 8);
    EXPECT_EQ(j["q_lora_rank"], 64);
    EXPECT_EQ(j["n_group"], glm ? 1 : 4);
    if (glm) EXPECT_EQ(j["indexer_types"], nlohmann::json({"full", "full", "shared", "shared", "full", "shared"}));
    if (!glm) {  // tiny deepseek32 carries YaRN as DeepSeek-V3.2 does
      EXPECT_EQ(j["rope_scaling"]["type"], "yarn");
      EXPECT_EQ(j["rope_scaling"]["factor"], 4.0);
      EXPECT_EQ(j["rope_scaling"]["original_max_position_embeddings"], 32);
    }
    EXPECT_TRUE(std::filesystem::exists(dir + "/model.safetensors") ||
                std::filesystem::exists(dir + "/model.safetensors.index.json"));
  }
}

// HF names (kv_b_proj whole, experts one tensor each, the indexer under
// self_attn.indexer) and GGUF names (kv_b split, experts stacked) hold the
// same numbers: the same reference logits.
TEST(SparseFiles, BothFormatsLoadTheSameModel) {
  for (Arch arch : {Arch::kGlmDsa, Arch::kDeepseek32, Arch::kKdaDsa}) {
    ModelSpec spec = *LookupShape(arch, "tiny");
    const std::string a = ArchName(arch);
    auto hf = LoadModel(testing_util::Write(spec, FileFormat::kSafetensors, DType::kF32, 9, a + "_same_hf"));
    auto gguf = LoadModel(testing_util::Write(spec, FileFormat::kGguf, DType::kF32, 9, a + "_same.gguf"));
    ASSERT_TRUE(hf.ok()) << hf.status().ToString();
    ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
    EXPECT_EQ((*hf)->config.indexer_full, (*gguf)->config.indexer_full) << a;
    EXPECT_EQ((*hf)->config.expert_groups, (*gguf)->config.expert_groups) << a;
    const std::vector<int32_t> tokens = {1, 5, 9, 200, 7, 7, 31, 64, 3, 2, 800, 17, 5, 5, 90, 4, 11, 12, 13, 14};
    auto x = ReferenceForward(**hf, tokens);
    auto y = ReferenceForward(**gguf, tokens);
    ASSERT_TRUE(x.ok() && y.ok());
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); ++t)
      for (size_t i = 0; i < (*x)[t].size(); ++i) worst = std::max(worst, std::fabs((*x)[t][i] - (*y)[t][i]));
    EXPECT_LT(worst, 1e-9) << a;
  }
}

TEST(SparseFiles, BrokenIndexerLayoutsAreClearErrors) {
  ModelSpec spec = *LookupShape(Arch::kGlmDsa, "tiny");
  const std::string path = testing_util::Write(spec, FileFormat::kGguf, DType::kF32, 3, "glm_broken.gguf");
  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok());
  // Copies the file with `key` replaced by what `edit` writes.
  auto check = [&](const std::string& name, const std::string& key, auto edit, const std::string& want) {
    const std::string out = testing_util::TempPath(name);
    GgufWriter w;
    ASSERT_TRUE(testing_util::CopyGgufMetadata(*g, w, [&](const std::string& k) { return k == key; }).ok());
    edit(w);
    ASSERT_TRUE(testing_util::CopyGgufTensors(*g, w).ok());
    ASSERT_TRUE(w.WriteFile(out).ok());
    auto m = LoadModel(out);
    ASSERT_FALSE(m.ok()) << name;
    EXPECT_NE(m.status().message().find(want), std::string::npos) << m.status().message();
  };
  const std::string types = "glm-dsa.attention.indexer.types";
  check("glm_types_short.gguf", types,
        [](GgufWriter& w) { w.AddBoolArray("glm-dsa.attention.indexer.types", {true, false}); },
        "indexer.types' has 2 entries for 6 layers");
  check("glm_types_first_shared.gguf", types,
        [](GgufWriter& w) {
          w.AddBoolArray("glm-dsa.attention.indexer.types", {false, true, false, false, true, false});
        },
        "none comes before it");
  check("glm_linear_rope.gguf", "glm-dsa.rope.scaling.type",
        [](GgufWriter& w) { w.AddString("glm-dsa.rope.scaling.type", "linear"); }, "by YaRN only");
}

}  // namespace
}  // namespace lineage::model
