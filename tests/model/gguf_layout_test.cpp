// The GGUF mkmodel writes has llama.cpp's converter layout (spec §5.2):
// tensor names, ggml shapes and types, metadata keys and their types.
#include <gtest/gtest.h>

#include "model/gguf_file.h"
#include "test_util.h"

namespace lineage::model {
namespace {

void ExpectTensor(const GgufFile& g, const std::string& name, std::vector<int64_t> ne, GgmlType type) {
  const GgufTensorInfo* t = g.FindTensor(name);
  ASSERT_NE(t, nullptr) << name;
  EXPECT_EQ(t->ne, ne) << name;
  EXPECT_EQ(t->ggml_type, static_cast<uint32_t>(type)) << name;
}

void ExpectInt(const GgufFile& g, const std::string& key, int64_t want, GgufType type) {
  const GgufValue* v = g.Find(key);
  ASSERT_NE(v, nullptr) << key;
  EXPECT_EQ(v->type, type) << key;
  EXPECT_EQ(v->as_int, want) << key;
}

TEST(GgufLayout, Qwen35MatchesTheConverter) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  std::string path = testing_util::Write(*spec, FileFormat::kGguf, DType::kBF16, 4, "layout35.gguf");
  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g->GetString("general.architecture"), "qwen35");
  const auto u32 = GgufType::kUint32;
  ExpectInt(*g, "general.file_type", 32, u32);  // MOSTLY_BF16
  ExpectInt(*g, "qwen35.block_count", 8, u32);
  ExpectInt(*g, "qwen35.embedding_length", 128, u32);
  ExpectInt(*g, "qwen35.feed_forward_length", 256, u32);
  ExpectInt(*g, "qwen35.attention.head_count", 4, u32);
  ExpectInt(*g, "qwen35.attention.head_count_kv", 2, u32);
  ExpectInt(*g, "qwen35.attention.key_length", 64, u32);
  ExpectInt(*g, "qwen35.attention.value_length", 64, u32);
  ExpectInt(*g, "qwen35.rope.dimension_count", 16, u32);
  ExpectInt(*g, "qwen35.full_attention_interval", 4, u32);
  ExpectInt(*g, "qwen35.ssm.conv_kernel", 4, u32);
  ExpectInt(*g, "qwen35.ssm.state_size", 32, u32);
  ExpectInt(*g, "qwen35.ssm.group_count", 2, u32);
  ExpectInt(*g, "qwen35.ssm.time_step_rank", 4, u32);
  ExpectInt(*g, "qwen35.ssm.inner_size", 128, u32);
  EXPECT_EQ(g->Find("qwen35.rope.freq_base")->type, GgufType::kFloat32);
  EXPECT_EQ(*g->GetFloat("qwen35.rope.freq_base"), 1e7);
  auto sections = g->GetIntArray("qwen35.rope.dimension_sections");
  ASSERT_TRUE(sections.ok());
  EXPECT_EQ(*sections, (std::vector<int64_t>{3, 3, 2, 0}));
  EXPECT_EQ(g->Find("qwen35.rope.dimension_sections")->elem_type, GgufType::kInt32);
  EXPECT_EQ(*g->GetString("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*g->GetString("tokenizer.ggml.pre"), "qwen35");
  EXPECT_EQ(g->GetStringArray("tokenizer.ggml.tokens")->size(), 1024u);
  EXPECT_EQ(g->Find("tokenizer.ggml.token_type")->elem_type, GgufType::kInt32);
  EXPECT_TRUE(g->GetInt("tokenizer.ggml.eos_token_id").ok());
  EXPECT_NE(g->GetString("tokenizer.chat_template")->find("<|im_start|>"), std::string::npos);

  const auto F32 = GgmlType::kF32, BF16 = GgmlType::kBF16;
  ExpectTensor(*g, "token_embd.weight", {128, 1024}, BF16);
  EXPECT_EQ(g->FindTensor("output.weight"), nullptr);  // tied
  ExpectTensor(*g, "output_norm.weight", {128}, F32);
  ExpectTensor(*g, "blk.0.attn_norm.weight", {128}, F32);
  ExpectTensor(*g, "blk.0.post_attention_norm.weight", {128}, F32);
  ExpectTensor(*g, "blk.0.attn_qkv.weight", {128, 256}, BF16);
  ExpectTensor(*g, "blk.0.attn_gate.weight", {128, 128}, BF16);
  ExpectTensor(*g, "blk.0.ssm_beta.weight", {128, 4}, BF16);
  ExpectTensor(*g, "blk.0.ssm_alpha.weight", {128, 4}, BF16);
  ExpectTensor(*g, "blk.0.ssm_conv1d.weight", {4, 256}, F32);
  ExpectTensor(*g, "blk.0.ssm_dt.bias", {4}, F32);
  ExpectTensor(*g, "blk.0.ssm_a", {4}, F32);
  ExpectTensor(*g, "blk.0.ssm_norm.weight", {32}, F32);
  ExpectTensor(*g, "blk.0.ssm_out.weight", {128, 128}, BF16);
  ExpectTensor(*g, "blk.3.attn_q.weight", {128, 512}, BF16);
  ExpectTensor(*g, "blk.3.attn_k.weight", {128, 128}, BF16);
  ExpectTensor(*g, "blk.3.attn_v.weight", {128, 128}, BF16);
  ExpectTensor(*g, "blk.3.attn_output.weight", {256, 128}, BF16);
  ExpectTensor(*g, "blk.3.attn_q_norm.weight", {64}, F32);
  ExpectTensor(*g, "blk.3.attn_k_norm.weight", {64}, F32);
  ExpectTensor(*g, "blk.7.ffn_gate.weight", {128, 256}, BF16);
  ExpectTensor(*g, "blk.7.ffn_down.weight", {256, 128}, BF16);
  EXPECT_EQ(g->FindTensor("blk.3.ssm_a"), nullptr);
  EXPECT_EQ(g->FindTensor("blk.8.attn_norm.weight"), nullptr);
  // ssm_a holds -exp(A_log) < 0; zero-centred norms hold 1 + w ~ 1.
  auto a = g->Tensor("blk.0.ssm_a");
  for (int i = 0; i < 4; ++i) EXPECT_LT(static_cast<const float*>(a->data)[i], 0.0f);
  auto n = g->Tensor("blk.0.attn_norm.weight");
  EXPECT_NEAR(static_cast<const float*>(n->data)[0], 1.0f, 0.2f);
}

TEST(GgufLayout, Qwen3MatchesTheConverter) {
  auto spec = LookupShape(Arch::kQwen3, "tiny");
  ASSERT_TRUE(spec.ok());
  std::string path = testing_util::Write(*spec, FileFormat::kGguf, DType::kQ8_0, 4, "layout3.gguf");
  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g->GetString("general.architecture"), "qwen3");
  EXPECT_EQ(*g->GetString("tokenizer.ggml.pre"), "qwen2");
  ExpectInt(*g, "general.file_type", 7, GgufType::kUint32);  // MOSTLY_Q8_0
  ExpectInt(*g, "qwen3.block_count", 4, GgufType::kUint32);
  ExpectInt(*g, "qwen3.attention.key_length", 32, GgufType::kUint32);
  EXPECT_EQ(*g->GetFloat("qwen3.rope.freq_base"), 1e6);
  EXPECT_EQ(g->Find("qwen3.ssm.conv_kernel"), nullptr);
  ExpectTensor(*g, "blk.0.ffn_norm.weight", {128}, GgmlType::kF32);
  ExpectTensor(*g, "blk.0.attn_q.weight", {128, 128}, GgmlType::kQ8_0);
  ExpectTensor(*g, "blk.0.attn_k.weight", {128, 64}, GgmlType::kQ8_0);
  ExpectTensor(*g, "blk.0.attn_q_norm.weight", {32}, GgmlType::kF32);
  ExpectTensor(*g, "token_embd.weight", {128, 1024}, GgmlType::kQ8_0);
  EXPECT_EQ(g->FindTensor("blk.0.post_attention_norm.weight"), nullptr);
}

}  // namespace
}  // namespace lineage::model
