// Kimi Linear model files (spec §7.5): mkmodel writes the real GGUF names and
// keys (the per-layer head_count_kv array, the split attn_k_b / attn_v_b) and
// the released config.json; both formats load the same weights; a file whose
// layer kinds disagree with its tensors, or whose latent width is wrong, is a
// clear error; the real shape has the parameter count of its name.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf_copy.h"
#include "model/gguf_config.h"
#include "model/gguf_file.h"
#include "model/load_model.h"
#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "model/tensor_plan.h"
#include "test_util.h"

namespace lineage::model {
namespace {

ModelSpec Tiny() { return *LookupShape(Arch::kKimiLinear, "tiny"); }

std::vector<int64_t> Ne(const GgufFile& g, const std::string& name) {
  const GgufTensorInfo* t = g.FindTensor(name);
  return t ? t->ne : std::vector<int64_t>{};
}

TEST(KimiFiles, GgufHasTheRealNamesAndKeys) {
  const std::string path = testing_util::Write(Tiny(), FileFormat::kGguf, DType::kF32, 3, "kimi_names.gguf");
  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g->GetString("general.architecture"), "kimi-linear");
  EXPECT_EQ(*g->GetIntArray("kimi-linear.attention.head_count_kv"), (std::vector<int64_t>{0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(*g->GetInt("kimi-linear.attention.kv_lora_rank"), 32);
  EXPECT_EQ(*g->GetInt("kimi-linear.attention.key_length"), 48);  // the latent row, MQA-style
  EXPECT_EQ(*g->GetInt("kimi-linear.attention.key_length_mla"), 48);
  EXPECT_EQ(*g->GetInt("kimi-linear.attention.value_length_mla"), 32);
  EXPECT_EQ(*g->GetInt("kimi-linear.rope.dimension_count"), 16);
  EXPECT_EQ(*g->GetInt("kimi-linear.kda.head_dim"), 32);
  EXPECT_EQ(*g->GetInt("kimi-linear.leading_dense_block_count"), 1);
  EXPECT_EQ(*g->GetInt("kimi-linear.expert_shared_count"), 1);
  EXPECT_NEAR(*g->GetFloat("kimi-linear.expert_weights_scale"), 2.446, 1e-6);
  // ggml ne order: attn_k_b {dn, L, nh}, attn_v_b {L, dv, nh}, convs {K, 1, inner, 1}.
  EXPECT_EQ(Ne(*g, "blk.3.attn_k_b.weight"), (std::vector<int64_t>{32, 32, 4}));
  EXPECT_EQ(Ne(*g, "blk.3.attn_v_b.weight"), (std::vector<int64_t>{32, 32, 4}));
  EXPECT_EQ(Ne(*g, "blk.3.attn_kv_a_mqa.weight"), (std::vector<int64_t>{128, 48}));
  EXPECT_EQ(Ne(*g, "blk.3.attn_q.weight"), (std::vector<int64_t>{128, 4 * 48}));
  EXPECT_EQ(Ne(*g, "blk.0.ssm_conv1d_q.weight"), (std::vector<int64_t>{4, 1, 128, 1}));
  EXPECT_EQ(Ne(*g, "blk.0.ssm_a"), (std::vector<int64_t>{1, 4, 1, 1}));
  for (const char* name : {"blk.0.ssm_f_a.weight", "blk.0.ssm_f_b.weight", "blk.0.ssm_beta.weight",
                           "blk.0.ssm_dt.bias", "blk.0.ssm_g_a.weight", "blk.0.ssm_g_b.weight",
                           "blk.0.ssm_norm.weight", "blk.0.attn_output.weight", "blk.0.ffn_gate.weight",
                           "blk.1.ffn_gate_inp.weight", "blk.1.exp_probs_b.bias", "blk.1.ffn_gate_exps.weight",
                           "blk.1.ffn_up_shexp.weight", "blk.3.attn_kv_a_norm.weight", "blk.3.ffn_norm.weight"})
    EXPECT_NE(g->FindTensor(name), nullptr) << name;
  EXPECT_EQ(g->FindTensor("blk.0.ffn_gate_inp.weight"), nullptr) << "layer 0 is dense";
  EXPECT_EQ(g->FindTensor("blk.3.attn_kv_b.weight"), nullptr) << "kv_b is split";
}

TEST(KimiFiles, HfConfigIsTheReleasedOne) {
  const std::string dir = testing_util::Write(Tiny(), FileFormat::kSafetensors, DType::kBF16, 3, "kimi_hf_cfg");
  std::ifstream in(dir + "/config.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["architectures"][0], "KimiLinearForCausalLM");
  EXPECT_EQ(j["model_type"], "kimi_linear");
  EXPECT_EQ(j["linear_attn_config"]["full_attn_layers"], nlohmann::json({4, 8}));
  EXPECT_EQ(j["linear_attn_config"]["kda_layers"], nlohmann::json({1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(j["first_k_dense_replace"], 1);
  EXPECT_TRUE(j["q_lora_rank"].is_null());
  EXPECT_EQ(j["moe_router_activation_func"], "sigmoid");
}

// Every format holds the same model: HF safetensors (kv_b_proj whole, experts
// one tensor each), GGUF (kv_b split and k transposed, experts stacked) and
// the in-memory random model give the same reference logits.
TEST(KimiFiles, BothFormatsLoadTheSameWeights) {
  const ModelSpec spec = Tiny();
  const std::string hf = testing_util::Write(spec, FileFormat::kSafetensors, DType::kF32, 5, "kimi_same_hf");
  const std::string gguf = testing_util::Write(spec, FileFormat::kGguf, DType::kF32, 5, "kimi_same.gguf");
  auto a = LoadModel(hf);
  auto b = LoadModel(gguf);
  auto r = MakeRandomModel(spec, DType::kF32, 5);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ModelConfig& c = (*b)->config;
  EXPECT_EQ(c.arch, Arch::kKimiLinear);
  EXPECT_EQ(c.num_full_layers(), 2);
  EXPECT_EQ(c.mla.kv_lora_rank, 32);
  EXPECT_EQ(c.mla.qk_nope_dim, 32);
  EXPECT_EQ(c.experts.leading_dense_layers, 1);
  EXPECT_EQ((*a)->config.layers, c.layers);
  EXPECT_EQ(c.kv_bytes_per_token(), 2 * 48 * 4);
  const auto tokens = testing_util::SomeTokens(7, 1024);
  ReferenceTrace trace;
  auto la = ReferenceForward(**a, tokens, &trace);
  auto lb = ReferenceForward(**b, tokens);
  auto lr = ReferenceForward(**r, tokens);
  ASSERT_TRUE(la.ok() && lb.ok() && lr.ok());
  EXPECT_LT(testing_util::MaxRelErr(*lb, *la), 1e-6);
  EXPECT_LT(testing_util::MaxRelErr(*lr, *la), 1e-9);
  ASSERT_EQ(trace.experts.size(), 7u) << "one routing record per MoE layer (layer 0 is dense)";
  for (double rms : trace.layer_rms) EXPECT_TRUE(std::isfinite(rms) && rms > 0 && rms < 1e3) << rms;
}

// Copies the GGUF at `src` to `dst` with `key` replaced by a u32 array.
Status CopyWithArray(const std::string& src, const std::string& dst, const std::string& key,
                     const std::vector<uint32_t>& value) {
  LINEAGE_ASSIGN_OR_RETURN(GgufFile g, GgufFile::Open(src));
  GgufWriter w;
  LINEAGE_RETURN_IF_ERROR(testing_util::CopyGgufMetadata(g, w, [&](const std::string& k) { return k == key; }));
  w.AddUint32Array(key, value);
  LINEAGE_RETURN_IF_ERROR(testing_util::CopyGgufTensors(g, w));
  return w.WriteFile(dst);
}

Status CopyWithKey(const std::string& src, const std::string& dst, const std::string& key, uint32_t value) {
  LINEAGE_ASSIGN_OR_RETURN(GgufFile g, GgufFile::Open(src));
  GgufWriter w;
  LINEAGE_RETURN_IF_ERROR(testing_util::CopyGgufMetadata(g, w, [&](const std::string& k) { return k == key; }));
  w.AddUint32(key, value);
  LINEAGE_RETURN_IF_ERROR(testing_util::CopyGgufTensors(g, w));
  return w.WriteFile(dst);
}

TEST(KimiFiles, LayerKindsThatDisagreeWithTheTensorsAreAClearError) {
  const std::string good = testing_util::Write(Tiny(), FileFormat::kGguf, DType::kF32, 3, "kimi_kinds.gguf");
  const std::string bad = testing_util::TempPath("kimi_kinds_bad.gguf");
  ASSERT_TRUE(CopyWithArray(good, bad, "kimi-linear.attention.head_count_kv", {0, 0, 1, 0, 0, 0, 0, 1}).ok());
  testing_util::ExpectError(bad, {"kimi_kinds_bad.gguf", "layer 2", "latent attention", "KDA"});
  const std::string bad2 = testing_util::TempPath("kimi_kinds_bad2.gguf");
  ASSERT_TRUE(CopyWithArray(good, bad2, "kimi-linear.attention.head_count_kv", {0, 0, 0, 0, 0, 0, 0, 1}).ok());
  testing_util::ExpectError(bad2, {"kimi_kinds_bad2.gguf", "layer 3", "KDA", "latent attention"});
  const std::string short_array = testing_util::TempPath("kimi_kinds_short.gguf");
  ASSERT_TRUE(CopyWithArray(good, short_array, "kimi-linear.attention.head_count_kv", {0, 0, 0, 1}).ok());
  testing_util::ExpectError(short_array, {"head_count_kv", "4 entries for 8 layers"});

  // HF: a layer in neither list, and the lists disagreeing with the tensors.
  const std::string dir = testing_util::Write(Tiny(), FileFormat::kSafetensors, DType::kF32, 3, "kimi_kinds_hf");
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir + "/config.json"));
  j["linear_attn_config"]["kda_layers"] = {1, 2, 3, 5, 6};
  std::ofstream(dir + "/config.json") << j.dump(2);
  testing_util::ExpectError(dir, {"config.json", "layer 7 is in neither"});
  j["linear_attn_config"]["kda_layers"] = {1, 2, 3, 5, 6, 7, 8};
  j["linear_attn_config"]["full_attn_layers"] = {4};
  std::ofstream(dir + "/config.json") << j.dump(2);
  testing_util::ExpectError(dir, {"layer 7", "KDA", "latent attention"});
}

TEST(KimiFiles, WrongLatentWidthIsAClearError) {
  const std::string good = testing_util::Write(Tiny(), FileFormat::kGguf, DType::kF32, 3, "kimi_latent.gguf");
  const std::string bad = testing_util::TempPath("kimi_latent_bad.gguf");
  ASSERT_TRUE(CopyWithKey(good, bad, "kimi-linear.attention.kv_lora_rank", 40).ok());
  testing_util::ExpectError(bad, {"kimi_latent_bad.gguf", "attention.key_length' is 48", "latent row", "56"});
  // key_length moved along: the tensors say otherwise.
  const std::string bad2 = testing_util::TempPath("kimi_latent_bad2.gguf");
  ASSERT_TRUE(CopyWithKey(good, bad2, "kimi-linear.attention.kv_lora_rank", 40).ok());
  const std::string bad3 = testing_util::TempPath("kimi_latent_bad3.gguf");
  ASSERT_TRUE(CopyWithKey(bad2, bad3, "kimi-linear.attention.key_length", 56).ok());
  testing_util::ExpectError(bad3, {"kimi_latent_bad3.gguf", "attn_kv_a_mqa", "[48, 128]", "expected [56, 128]"});

  const std::string dir = testing_util::Write(Tiny(), FileFormat::kSafetensors, DType::kF32, 3, "kimi_latent_hf");
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir + "/config.json"));
  j["kv_lora_rank"] = 24;
  std::ofstream(dir + "/config.json") << j.dump(2);
  testing_util::ExpectError(dir, {"kv_a_proj_with_mqa", "[48, 128]", "expected [40, 128]"});
}

TEST(KimiFiles, RealShapeHasTheParameterCountOfItsName) {
  auto s = LookupShape(Arch::kKimiLinear, "kimi-linear-48b-a3b");
  ASSERT_TRUE(s.ok());
  const ModelConfig& c = s->config;
  EXPECT_EQ(c.num_full_layers(), 7);
  EXPECT_EQ(c.num_linear_layers(), 20);
  EXPECT_EQ(c.mixer(26), MixerKind::kLatent);
  EXPECT_EQ(c.mla.latent_dim(), 576);
  EXPECT_EQ(c.kv_bytes_per_token(), 7 * 576 * 4);  // fp32 pages; 8,064 B in bf16 (spec §8)
  EXPECT_EQ(c.recurrent_bytes(), 20 * (3 * 3 * 4096 + 32 * 128 * 128) * 4);
  int64_t n = 0;
  for (const PlannedTensor& p : PlanTensors(c)) {
    int64_t e = 1;
    for (int64_t d : p.hf_shape) e *= d;
    n += e;
  }
  const double billions = static_cast<double>(n) / 1e9;
  std::printf("kimi-linear-48b-a3b: %.2fB parameters\n", billions);
  EXPECT_GT(billions, 47.0);
  EXPECT_LT(billions, 50.0);
  auto cut = CutLayers(*s, 8);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->config.num_full_layers(), 2);
  EXPECT_FALSE(CutLayers(*s, 3).ok());
}

}  // namespace
}  // namespace lineage::model
