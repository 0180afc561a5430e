// Sparse latent model files (spec latent-attention §3): mkmodel writes
// glm-dsa GGUF files with llama.cpp's tensor names and keys (the same set as
// the file llama.cpp's own gguf package wrote, tiny-glm-dsa.gguf), and
// config.json as GLM-5 and DeepSeek-V3.2 publish it; both formats hold the
// same model; files with a broken indexer layout or an unsupported rope
// scaling are clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "gguf_copy.h"
#include "model/gguf_config.h"
#include "model/gguf_file.h"
#include "model/hf_config.h"
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
    if (glm) {
      EXPECT_EQ(j["indexer_types"], nlohmann::json({"full", "full", "shared", "shared", "full", "shared"}));
    }
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
  for (Arch arch : {Arch::kGlmDsa, Arch::kDeepseek32, Arch::kKdaDsa, Arch::kKimiK3}) {
    ModelSpec spec = *LookupShape(arch, "tiny");
    const std::string a = ArchName(arch);
    auto hf = LoadModel(testing_util::Write(spec, FileFormat::kSafetensors, DType::kF32, 9, a + "_same_hf"));
    auto gguf = LoadModel(testing_util::Write(spec, FileFormat::kGguf, DType::kF32, 9, a + "_same.gguf"));
    ASSERT_TRUE(hf.ok()) << hf.status().ToString();
    ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
    EXPECT_EQ((*hf)->config.indexer.full, (*gguf)->config.indexer.full) << a;
    EXPECT_EQ((*hf)->config.experts.groups, (*gguf)->config.experts.groups) << a;
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

// Kimi K3's checkpoint as llama.cpp's converter reads it (spec
// latent-attention §3.3; conversion/kimi_k3.py): the text model's fields
// under text_config, which names itself Kimi Linear, the tensors under
// language_model., each AttnRes vector as <x>_res_norm and <x>_res_proj,
// the latent MoE's routed_expert_{down,up}_proj and routed_expert_norm.
TEST(SparseFiles, KimiK3CheckpointIsTheConvertersLayout) {
  ModelSpec spec = *LookupShape(Arch::kKimiK3, "tiny");
  const std::string dir = testing_util::Write(spec, FileFormat::kSafetensors, DType::kBF16, 3, "kimi_k3_hf_cfg");
  std::ifstream in(dir + "/config.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["architectures"][0], "KimiK3ForConditionalGeneration");
  const nlohmann::json& t = j["text_config"];
  EXPECT_EQ(t["architectures"][0], "KimiLinearForCausalLM");
  EXPECT_EQ(t["hidden_act"], "situ");
  EXPECT_EQ(t["activation_situ_beta"], 4.0);
  EXPECT_EQ(t["activation_situ_linear_beta"], 25.0);
  EXPECT_EQ(t["attn_res_block_size"], 3);
  EXPECT_EQ(t["routed_expert_hidden_size"], 64);
  EXPECT_EQ(t["linear_attn_config"]["gate_lower_bound"], -5.0);
  EXPECT_EQ(t["linear_attn_config"]["full_attn_layers"], nlohmann::json({4, 8}));
  EXPECT_TRUE(t["mla_use_nope"].get<bool>());
  std::ifstream st(dir + "/model.safetensors", std::ios::binary);
  uint64_t header_len = 0;
  st.read(reinterpret_cast<char*>(&header_len), 8);
  std::string header(header_len, '\0');
  st.read(header.data(), static_cast<std::streamsize>(header_len));
  const nlohmann::json names = nlohmann::json::parse(header);
  for (const char* name :
       {"language_model.model.embed_tokens.weight", "language_model.lm_head.weight",
        "language_model.model.layers.0.self_attention_res_norm.weight",
        "language_model.model.layers.0.self_attention_res_proj.weight",
        "language_model.model.layers.0.mlp_res_norm.weight", "language_model.model.layers.0.mlp_res_proj.weight",
        "language_model.model.output_attn_res_norm.weight", "language_model.model.output_attn_res_proj.weight",
        "language_model.model.layers.0.self_attn.g_proj.weight", "language_model.model.layers.3.self_attn.g_proj.weight",
        "language_model.model.layers.1.block_sparse_moe.routed_expert_down_proj.weight",
        "language_model.model.layers.1.block_sparse_moe.routed_expert_up_proj.weight",
        "language_model.model.layers.1.block_sparse_moe.routed_expert_norm.weight",
        "language_model.model.layers.1.block_sparse_moe.experts.0.w1.weight"})
    EXPECT_TRUE(names.contains(name)) << name;
}

// The published shape's config.json (93 layers, 896 experts in a latent of
// 3584) reads back as the shape.
TEST(SparseFiles, KimiK3ShapeRoundTripsThroughItsConfig) {
  ModelSpec spec = *LookupShape(Arch::kKimiK3, "kimi-k3");
  VocabData vocab;
  vocab.eos_id = 2;
  const nlohmann::json j = nlohmann::json::parse(MakeHfConfig(spec, vocab, DType::kBF16).dump());
  auto c = ParseHfConfig(j, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ModelConfig& want = spec.config;
  EXPECT_EQ(c->arch, Arch::kKimiK3);
  EXPECT_EQ(c->layers, want.layers);
  EXPECT_EQ(c->num_heads, want.num_heads);
  EXPECT_EQ(c->delta.k_heads, want.delta.k_heads);
  EXPECT_EQ(c->mla.q_lora_rank, want.mla.q_lora_rank);
  EXPECT_EQ(c->mla.kv_lora_rank, want.mla.kv_lora_rank);
  EXPECT_EQ(c->experts.count, want.experts.count);
  EXPECT_EQ(c->experts.per_token, want.experts.per_token);
  EXPECT_EQ(c->experts.latent, want.experts.latent);
  EXPECT_EQ(c->experts.shared_width, want.experts.shared_width);
  EXPECT_EQ(c->experts.leading_dense_layers, want.experts.leading_dense_layers);
  EXPECT_EQ(c->attn_res_block, want.attn_res_block);
  EXPECT_EQ(c->situ.beta, want.situ.beta);
  EXPECT_EQ(c->situ.linear_beta, want.situ.linear_beta);
  EXPECT_EQ(c->delta.gate_lower_bound, want.delta.gate_lower_bound);
  EXPECT_FALSE(c->mla.rope);
}

// A K3 config.json without what K3 needs, or with another activation, is an
// error naming the field.
TEST(SparseFiles, KimiK3ConfigErrorsNameTheField) {
  ModelSpec spec = *LookupShape(Arch::kKimiK3, "tiny");
  const std::string dir = testing_util::Write(spec, FileFormat::kSafetensors, DType::kF32, 3, "kimi_k3_hf_bad");
  std::ifstream in(dir + "/config.json");
  const nlohmann::json good = nlohmann::json::parse(in);
  auto check = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& want) {
    nlohmann::json j = good;
    edit(j["text_config"]);
    std::ofstream(dir + "/config.json") << j.dump(2);
    auto m = LoadModel(dir);
    ASSERT_FALSE(m.ok()) << want;
    EXPECT_NE(m.status().message().find(want), std::string::npos) << m.status().message();
  };
  check([](nlohmann::json& t) { t.erase("attn_res_block_size"); }, "attn_res_block_size");
  check([](nlohmann::json& t) { t["hidden_act"] = "silu"; }, "hidden_act");
  check([](nlohmann::json& t) { t["activation_situ_beta"] = -1; }, "activation_situ_beta");
  check([](nlohmann::json& t) { t["linear_attn_config"]["gate_lower_bound"] = 2; }, "gate_lower_bound");
  check([](nlohmann::json& t) { t["linear_attn_config"]["num_heads"] = 3; }, "share a head count");
  check(
      [](nlohmann::json& t) {
        t["linear_attn_config"]["full_attn_layers"] = {3, 8};
        t["linear_attn_config"]["kda_layers"] = {1, 2, 4, 5, 6, 7};
      },
      "layer 2 is latent attention (MLA) by the file's layer kinds");
  std::ofstream(dir + "/config.json") << good.dump(2);
  auto m = LoadModel(dir);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
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
