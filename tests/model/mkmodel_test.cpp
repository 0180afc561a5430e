// `lineage mkmodel` end to end: determinism, the files of a HF directory,
// the embedded chat templates, and its refusals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/chat_templates.h"
#include "model/gguf_file.h"
#include "model/load_model.h"
#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "test_util.h"
#include "text/tokenizer.h"

namespace lineage::model {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

int Mkmodel(const std::string& args) {
  std::string cmd = std::string(LINEAGE_BINARY) + " mkmodel " + args + " > /dev/null 2>&1";
  return std::system(cmd.c_str());
}

// Every file under `path` (or the file itself), relative name -> bytes.
std::map<std::string, std::string> Contents(const std::string& path) {
  std::map<std::string, std::string> out;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path)) out[e.path().filename().string()] = Slurp(e.path().string());
  } else {
    out[""] = Slurp(path);
  }
  return out;
}

TEST(Mkmodel, SameSeedGivesIdenticalBytes) {
  for (const std::string format : {"safetensors", "gguf"}) {
    std::string a = testing_util::TempPath("det_a_" + format), b = testing_util::TempPath("det_b_" + format),
                c = testing_util::TempPath("det_c_" + format);
    for (const auto& p : {a, b, c}) fs::remove_all(p);
    const std::string common = "--arch qwen3_5 --shape tiny --dtype bf16 --format " + format;
    ASSERT_EQ(Mkmodel(common + " --seed 42 --out " + a), 0);
    ASSERT_EQ(Mkmodel(common + " --seed 42 --out " + b), 0);
    ASSERT_EQ(Mkmodel(common + " --seed 43 --out " + c), 0);
    auto ca = Contents(a), cb = Contents(b), cc = Contents(c);
    EXPECT_FALSE(ca.empty());
    EXPECT_EQ(ca, cb) << format;
    EXPECT_NE(ca, cc) << format;
  }
}

TEST(Mkmodel, WritesARealQwen35Directory) {
  std::string dir = testing_util::TempPath("mk_hf");
  fs::remove_all(dir);
  ASSERT_EQ(Mkmodel("--arch qwen3_5 --shape tiny --format safetensors --dtype f32 --seed 3 --out " + dir), 0);
  for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                        "model.safetensors"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  auto config = nlohmann::json::parse(Slurp(dir + "/config.json"));
  EXPECT_EQ(config["architectures"][0], "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(config["tie_word_embeddings"], true);
  EXPECT_EQ(config["text_config"]["layer_types"][3], "full_attention");
  EXPECT_EQ(config["text_config"]["rope_parameters"]["partial_rotary_factor"], 0.25);
  auto tok_config = nlohmann::json::parse(Slurp(dir + "/tokenizer_config.json"));
  EXPECT_EQ(tok_config["chat_template"], ChatTemplateFor(Arch::kQwen3_5));
  auto tok = nlohmann::json::parse(Slurp(dir + "/tokenizer.json"));
  EXPECT_EQ(tok["model"]["type"], "BPE");
  EXPECT_EQ(tok["normalizer"]["type"], "NFC");
  EXPECT_FALSE(tok["added_tokens"].empty());
  // Tensors live under model.language_model.; the loaded model equals the in-memory one.
  EXPECT_NE(Slurp(dir + "/model.safetensors").find("model.language_model.layers.0.linear_attn.A_log"),
            std::string::npos);
  auto loaded = LoadModel(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto mem = MakeRandomModel(*LookupShape(Arch::kQwen3_5, "tiny"), DType::kF32, 3);
  auto tokens = testing_util::SomeTokens(4, 1024);
  EXPECT_EQ(*ReferenceForward(**loaded, tokens), *ReferenceForward(**mem, tokens));
  auto vs = LoadVocabSource(dir);
  ASSERT_TRUE(vs.ok());
  EXPECT_EQ(vs->tokenizer_json, dir + "/tokenizer.json");
}

TEST(Mkmodel, Qwen3DirectoryIsFlat) {
  std::string dir = testing_util::TempPath("mk_hf3");
  fs::remove_all(dir);
  ASSERT_EQ(Mkmodel("--arch qwen3 --shape tiny --format safetensors --dtype bf16 --seed 3 --out " + dir), 0);
  auto config = nlohmann::json::parse(Slurp(dir + "/config.json"));
  EXPECT_EQ(config["architectures"][0], "Qwen3ForCausalLM");
  EXPECT_FALSE(config.contains("text_config"));
  EXPECT_NE(Slurp(dir + "/model.safetensors").find("\"model.layers.0.self_attn.q_norm.weight\""), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(Slurp(dir + "/tokenizer_config.json"))["chat_template"], ChatTemplateFor(Arch::kQwen3));
}

TEST(Mkmodel, WritesMoeModelsCutToNLayers) {
  const std::string gguf = testing_util::TempPath("mk_moe.gguf");
  ASSERT_EQ(Mkmodel("--arch qwen3_5_moe --shape tiny --layers 4 --format gguf --dtype q8_0 --out " + gguf), 0);
  auto g = GgufFile::Open(gguf);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g->GetString("general.architecture"), "qwen35moe");
  EXPECT_EQ(*g->GetInt("qwen35moe.block_count"), 4);
  EXPECT_EQ(*g->GetInt("qwen35moe.expert_count"), 8);
  EXPECT_EQ(*g->GetInt("qwen35moe.expert_used_count"), 2);
  ASSERT_NE(g->FindTensor("blk.3.ffn_down_exps.weight"), nullptr);
  EXPECT_EQ(g->FindTensor("blk.3.ffn_gate_inp.weight")->ggml_type, 0u) << "the router stays f32";
  auto m = LoadModel(gguf);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->config.num_layers, 4);

  const std::string dir = testing_util::TempPath("mk_next_hf");
  fs::remove_all(dir);
  ASSERT_EQ(Mkmodel("--arch qwen3_next --shape tiny --format safetensors --dtype bf16 --out " + dir), 0);
  auto config = nlohmann::json::parse(Slurp(dir + "/config.json"));
  EXPECT_EQ(config["architectures"][0], "Qwen3NextForCausalLM");
  EXPECT_EQ(config["num_experts"], 8);
  const std::string st = Slurp(dir + "/model.safetensors");
  EXPECT_NE(st.find("\"model.layers.0.linear_attn.in_proj_qkvz.weight\""), std::string::npos);
  EXPECT_NE(st.find("\"model.layers.0.mlp.experts.7.down_proj.weight\""), std::string::npos);
  EXPECT_TRUE(LoadModel(dir).ok());

  EXPECT_NE(Mkmodel("--arch qwen3_5_moe --shape qwen3.5-35b-a3b --layers 2 --format gguf --out " + gguf + "2"), 0)
      << "two layers leave no attention layer";
  EXPECT_NE(Mkmodel("--arch qwen3_5_moe --shape qwen3-next-80b-a3b --format gguf --out " + gguf + "3"), 0);
}

// Kimi's two forms: the HF directory ships tiktoken.model (no
// tokenizer.json) as the real repository does, the GGUF file gpt2 tokens
// with merges and pre "kimi-k2"; both tokenize a rendered chat identically.
TEST(Mkmodel, KimiWritesItsOwnTokenizerInBothForms) {
  const std::string dir = testing_util::TempPath("mk_kimi_hf"), gguf = testing_util::TempPath("mk_kimi.gguf");
  fs::remove_all(dir);
  fs::remove_all(gguf);
  ASSERT_EQ(Mkmodel("--arch kimi_linear --shape tiny --format safetensors --dtype bf16 --out " + dir), 0);
  ASSERT_EQ(Mkmodel("--arch kimi_linear --shape tiny --format gguf --dtype bf16 --out " + gguf), 0);
  EXPECT_TRUE(fs::exists(dir + "/tiktoken.model"));
  EXPECT_FALSE(fs::exists(dir + "/tokenizer.json"));
  auto tok_config = nlohmann::json::parse(Slurp(dir + "/tokenizer_config.json"));
  EXPECT_EQ(tok_config["tokenizer_class"], "TikTokenTokenizer");
  EXPECT_EQ(tok_config["chat_template"], ChatTemplateFor(Arch::kKimiLinear));
  EXPECT_EQ(tok_config["added_tokens_decoder"]["785"]["content"], "<|im_middle|>");  // 1024 - 256 + 17
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto model_name = file->GetString("tokenizer.ggml.model"), pre = file->GetString("tokenizer.ggml.pre");
  ASSERT_TRUE(model_name.ok() && pre.ok());
  EXPECT_EQ(*model_name, "gpt2");
  EXPECT_EQ(*pre, "kimi-k2");
  auto from_dir = text::LoadTokenizer(dir);
  auto from_gguf = text::LoadTokenizer(gguf);
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().ToString();
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().ToString();
  EXPECT_EQ(from_dir->chat_template(), from_gguf->chat_template());
  const std::string chat =
      "<|im_system|>tool_declare<|im_middle|>[{\"type\": \"function\"}]<|im_end|><|im_user|>user<|im_middle|>"
      "Read README.md, then 東京 😀<|im_end|><|im_assistant|>assistant<|im_middle|>";
  const auto a = from_dir->Encode(chat, {.parse_special = true});
  EXPECT_EQ(a, from_gguf->Encode(chat, {.parse_special = true}));
  EXPECT_EQ(from_dir->Decode(a), chat);
  EXPECT_EQ(from_dir->eos_id(), 768 + 2);  // <|im_end|>
}

TEST(Mkmodel, RefusesQ8ForSafetensorsAndUnknownShapes) {
  std::string dir = testing_util::TempPath("mk_bad");
  EXPECT_NE(Mkmodel("--arch qwen3_5 --shape tiny --format safetensors --dtype q8_0 --out " + dir), 0);
  EXPECT_NE(Mkmodel("--arch qwen3 --shape qwen3.5-0.8b --format gguf --out " + dir), 0);
  EXPECT_NE(Mkmodel("--arch qwen9 --shape tiny --format gguf --out " + dir), 0);
  EXPECT_FALSE(fs::exists(dir));
}

TEST(ChatTemplates, EmbeddedTextsAreThePublishedOnes) {
  const std::string data = LINEAGE_SHARED_DATA;
  const std::string q35 = data + "/templates/Qwen3.5-4B.jinja", q3 = data + "/templates/Qwen-Qwen3-0.6B.jinja";
  if (!fs::exists(q35) || !fs::exists(q3)) GTEST_SKIP() << "shared data absent: " << data;
  EXPECT_EQ(ChatTemplateFor(Arch::kQwen3_5), Slurp(q35));
  EXPECT_EQ(ChatTemplateFor(Arch::kQwen3), Slurp(q3));
  const std::string kimi = data + "/templates/moonshotai-Kimi-K2.jinja";
  if (fs::exists(kimi)) {
    EXPECT_EQ(ChatTemplateFor(Arch::kKimiLinear), Slurp(kimi));
  }
}

// The real dimensions (cut to their first 4 layers and a small vocabulary to
// stay fast) keep activations O(1) with the chosen scales.
// `experts` > 0 keeps only that many routed experts (the widths, k and the
// trunk stay real; the count only sets how many router rows there are).
void ExpectRealDimensionsSane(Arch arch, const char* shape, int64_t experts = 0) {
  auto spec = LookupShape(arch, shape, 2048);
  ASSERT_TRUE(spec.ok());
  if (experts > 0) spec->config.experts.count = experts;
  spec->config.num_layers = 4;
  spec->config.layers.resize(4);
  auto m = MakeRandomModel(*spec, DType::kBF16, 1);
  ASSERT_TRUE(m.ok());
  ReferenceTrace trace;
  auto logits = ReferenceForward(**m, testing_util::SomeTokens(3, 2048), &trace);
  ASSERT_TRUE(logits.ok());
  for (double rms : trace.layer_rms) {
    EXPECT_GT(rms, 0.05) << shape;
    EXPECT_LT(rms, 10.0) << shape;
  }
  for (const auto& row : *logits) {
    double mx = -1e300, z = 0;
    for (double x : row) mx = std::max(mx, x);
    for (double x : row) z += std::exp(x - mx);
    EXPECT_LT(1.0 / z, 0.9) << shape;
  }
}

TEST(RandomModel, RealQwen35DimensionsStaySane) { ExpectRealDimensionsSane(Arch::kQwen3_5, "qwen3.5-0.8b"); }
TEST(RandomModel, RealQwen3DimensionsStaySane) { ExpectRealDimensionsSane(Arch::kQwen3, "qwen3-0.6b"); }
TEST(RandomModel, RealQwen35MoeDimensionsStaySane) {
  ExpectRealDimensionsSane(Arch::kQwen3_5Moe, "qwen3.5-35b-a3b", 10);
}
TEST(RandomModel, RealQwen3NextDimensionsStaySane) {
  ExpectRealDimensionsSane(Arch::kQwen3Next, "qwen3-next-80b-a3b", 12);
}

}  // namespace
}  // namespace lineage::model
