// The same random weights written as safetensors and as GGUF must give the
// same reference logits: this proves the GGUF transforms (-exp(A_log),
// +1 on zero-centred norms, squeezed conv) and the tiled V-head order.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/load_model.h"
#include "tools/random_model.h"
#include "tools/reference_forward.h"
#include "test_util.h"

namespace lineage::model {
namespace {

using testing_util::MaxRelErr;
using testing_util::SomeTokens;
using testing_util::Write;

void ExpectConfigMatchesSpec(const ModelConfig& got, const ModelSpec& spec) {
  const ModelConfig& want = spec.config;
  EXPECT_EQ(got.arch, want.arch);
  EXPECT_EQ(got.hidden, want.hidden);
  EXPECT_EQ(got.num_layers, want.num_layers);
  EXPECT_EQ(got.intermediate, want.intermediate);
  EXPECT_EQ(got.vocab, want.vocab);
  EXPECT_EQ(got.context_length, want.context_length);
  EXPECT_NEAR(got.rms_eps, want.rms_eps, 1e-12);  // GGUF stores it as f32
  EXPECT_EQ(got.tied_embeddings, want.tied_embeddings);
  EXPECT_EQ(got.num_heads, want.num_heads);
  EXPECT_EQ(got.num_kv_heads, want.num_kv_heads);
  EXPECT_EQ(got.head_dim, want.head_dim);
  EXPECT_EQ(got.attn_output_gate, want.attn_output_gate);
  EXPECT_DOUBLE_EQ(got.rope_theta, want.rope_theta);
  EXPECT_EQ(got.rope_dims, want.rope_dims);
  EXPECT_EQ(got.delta.k_heads, want.delta.k_heads);
  EXPECT_EQ(got.delta.v_heads, want.delta.v_heads);
  EXPECT_EQ(got.delta.k_dim, want.delta.k_dim);
  EXPECT_EQ(got.delta.v_dim, want.delta.v_dim);
  if (IsHybrid(want.arch)) {
    EXPECT_EQ(got.delta.conv_kernel, want.delta.conv_kernel);
  }
  EXPECT_EQ(got.experts.count, want.experts.count);
  EXPECT_EQ(got.experts.per_token, want.experts.per_token);
  EXPECT_EQ(got.experts.width, want.experts.width);
  EXPECT_EQ(got.experts.shared_width, want.experts.shared_width);
  EXPECT_EQ(got.layers, want.layers);
  EXPECT_FALSE(got.eos_token_ids.empty());
}

struct Case {
  Arch arch;
  DType dtype;
  bool tied = true;
};

class FormatEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(FormatEquivalence, SafetensorsAndGgufGiveTheSameLogits) {
  const Case c = GetParam();
  auto spec = LookupShape(c.arch, "tiny");
  ASSERT_TRUE(spec.ok());
  spec->config.tied_embeddings = c.tied;
  const std::string tag =
      std::string(ArchName(c.arch)) + "_" + std::string(Info(c.dtype).name) + (c.tied ? "" : "_untied");
  const uint64_t seed = 11;
  // q8_0 exists only in GGUF; its HF twin is the f32 checkpoint it was quantized from.
  const DType hf_dtype = c.dtype == DType::kQ8_0 ? DType::kF32 : c.dtype;
  std::string hf_path = Write(*spec, FileFormat::kSafetensors, hf_dtype, seed, tag + "_hf");
  std::string gguf_path = Write(*spec, FileFormat::kGguf, c.dtype, seed, tag + ".gguf");

  auto hf = LoadModel(hf_path);
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  auto gguf = LoadModel(gguf_path);
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  ExpectConfigMatchesSpec((*hf)->config, *spec);
  EXPECT_EQ((*hf)->weights.lm_head.data == (*hf)->weights.embed.data, c.tied);
  EXPECT_EQ((*gguf)->weights.lm_head.data == (*gguf)->weights.embed.data, c.tied);
  ExpectConfigMatchesSpec((*gguf)->config, *spec);
  EXPECT_EQ((*hf)->config.format, FileFormat::kSafetensors);
  EXPECT_EQ((*gguf)->config.format, FileFormat::kGguf);
  if (IsHybrid(c.arch)) {
    EXPECT_EQ((*gguf)->config.delta.v_head_order, GgufTilesVHeads(c.arch) ? VHeadOrder::kTiled : VHeadOrder::kGrouped);
  }
  EXPECT_EQ((*gguf)->weights.layers[0].input_norm.size(), static_cast<size_t>(spec->config.hidden));

  const auto tokens = SomeTokens(10, static_cast<int>(spec->config.vocab));
  auto lh = ReferenceForward(**hf, tokens);
  auto lg = ReferenceForward(**gguf, tokens);
  ASSERT_TRUE(lh.ok() && lg.ok());
  const double err = MaxRelErr(*lg, *lh);
  // The tiled V order permutes the columns of out_proj, so qwen3_5 sums the
  // same products in another order: equal up to double rounding only.
  const double exact = GgufTilesVHeads(c.arch) ? 1e-12 : 0.0;
  if (c.dtype == DType::kF32) {
    EXPECT_LE(err, 1e-9);
  } else if (c.dtype == DType::kBF16 || c.dtype == DType::kF16) {
    EXPECT_LE(err, exact);
  } else {
    // Q8_0 against the f32 weights it was quantized from (~0.4% per weight);
    // measured 0.059 (qwen3_5, the GDN stack amplifies) and 0.014 (qwen3).
    // MoE: a token whose router logits were close picks another expert
    // after quantization and its later logits move by O(1): measured 0.32
    // (qwen3_5_moe). The exact check against the in-memory q8_0 model below
    // is what proves the layout.
    EXPECT_LE(err, IsMoeArch(c.arch) ? 0.5 : 0.1);
    EXPECT_GT(err, 0.0);
  }
  std::printf("%s: max relative logit error gguf vs safetensors = %.3g\n", tag.c_str(), err);

  // The in-memory random model holds the same weights in HF layout; for
  // q8_0 the same quantized blocks, so the GGUF transforms are exact there too.
  auto mem = MakeRandomModel(*spec, c.dtype, seed);
  ASSERT_TRUE(mem.ok());
  auto lm = ReferenceForward(**mem, tokens);
  if (c.dtype == DType::kQ8_0) {
    EXPECT_LE(MaxRelErr(*lg, *lm), exact);
  } else {
    EXPECT_EQ(*lm, *lh);
  }
}

INSTANTIATE_TEST_SUITE_P(All, FormatEquivalence,
                         ::testing::Values(Case{Arch::kQwen3_5, DType::kF32}, Case{Arch::kQwen3_5, DType::kBF16},
                                           Case{Arch::kQwen3_5, DType::kQ8_0}, Case{Arch::kQwen3, DType::kF32},
                                           Case{Arch::kQwen3, DType::kBF16}, Case{Arch::kQwen3, DType::kQ8_0},
                                           Case{Arch::kQwen3_5, DType::kF16, false}, Case{Arch::kQwen3, DType::kF16, false},
                                           Case{Arch::kQwen3_5Moe, DType::kF32, false},
                                           Case{Arch::kQwen3_5Moe, DType::kBF16, false},
                                           Case{Arch::kQwen3_5Moe, DType::kQ8_0, false},
                                           Case{Arch::kQwen3Next, DType::kF32, false},
                                           Case{Arch::kQwen3Next, DType::kBF16, false}),
                         [](const auto& info) {
                           return std::string(ArchName(info.param.arch)) + "_" +
                                  std::string(Info(info.param.dtype).name) + (info.param.tied ? "" : "_untied");
                         });

// Without the V-head permutation the tiled GGUF would not match: reading it
// as grouped must change the logits (so the test above really checks it).
TEST(FormatEquivalence, VHeadOrderMatters) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  std::string path = Write(*spec, FileFormat::kGguf, DType::kF32, 3, "order.gguf");
  auto m = LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Model wrong = **m;
  wrong.config.delta.v_head_order = VHeadOrder::kGrouped;
  const auto tokens = SomeTokens(6, 1024);
  auto right_logits = ReferenceForward(**m, tokens);
  auto wrong_logits = ReferenceForward(wrong, tokens);
  EXPECT_GT(MaxRelErr(*wrong_logits, *right_logits), 1e-3);
}

TEST(FormatEquivalence, ShardedSafetensorsLoadTheSame) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  std::string one = Write(*spec, FileFormat::kSafetensors, DType::kBF16, 5, "one_hf");
  std::string sharded = Write(*spec, FileFormat::kSafetensors, DType::kBF16, 5, "sharded_hf", 1 << 20);
  EXPECT_TRUE(std::filesystem::exists(sharded + "/model.safetensors.index.json"));
  EXPECT_TRUE(std::filesystem::exists(sharded + "/model-00002-of-00004.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(sharded + "/model.safetensors"));
  auto a = LoadModel(one);
  auto b = LoadModel(sharded);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->files.size(), 4u);
  const auto tokens = SomeTokens(5, 1024);
  EXPECT_EQ(*ReferenceForward(**a, tokens), *ReferenceForward(**b, tokens));
}

// A checkpoint without layer_types (derived from full_attention_interval)
// and with the text tensors under `model.` instead of `model.language_model.`.
TEST(FormatEquivalence, HfVariantsLoadTheSame) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  std::string plain = Write(*spec, FileFormat::kSafetensors, DType::kBF16, 8, "plain_hf");
  std::string variant = Write(*spec, FileFormat::kSafetensors, DType::kBF16, 8, "variant_hf");
  {
    std::ifstream in(variant + "/config.json");
    nlohmann::json c = nlohmann::json::parse(in);
    c["text_config"].erase("layer_types");
    std::ofstream(variant + "/config.json") << c.dump();
  }
  std::string st = variant + "/model.safetensors";
  std::ifstream in(st, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  in.close();
  // Dropping the prefix shortens the header: pad it with spaces to keep the data offsets.
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  std::string header = bytes.substr(8, n);
  const std::string from = "\"model.language_model.", to = "\"model.";
  for (size_t at; (at = header.find(from)) != std::string::npos;) header.replace(at, from.size(), to);
  header.append(n - header.size(), ' ');
  std::ofstream(st, std::ios::binary) << bytes.substr(0, 8) << header << bytes.substr(8 + n);
  auto a = LoadModel(plain);
  auto b = LoadModel(variant);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->config.layers, spec->config.layers);
  const auto tokens = SomeTokens(5, 1024);
  EXPECT_EQ(*ReferenceForward(**a, tokens), *ReferenceForward(**b, tokens));
}

}  // namespace
}  // namespace lineage::model
