// A Qwen3.5 GGUF converted with its MTP block has block_count = L + 1 and
// nextn_predict_layers = 1 (spec §5.2, §9.9): the loader must read L trunk
// layers, and binds blk.L as the draft head only when the file holds it
// whole. The partial file is made by copying a written GGUF with GgufWriter
// and adding part of what the converter adds; whole blocks come from the
// writer (`mkmodel --mtp`), in both formats, which must agree.
#include <gtest/gtest.h>

#include <cstring>

#include "gguf_copy.h"
#include "model/gguf_file.h"
#include "tools/gguf_writer.h"
#include "model/load_model.h"
#include "tools/reference_forward.h"
#include "model/tensor_plan.h"
#include "test_util.h"

namespace lineage::model {
namespace {

// Re-emits every key and tensor of `g`, then adds the MTP block (blk.<layers>).
Status CopyWithMtpBlock(const GgufFile& g, const std::string& out, int64_t layers) {
  LINEAGE_ASSIGN_OR_RETURN(std::string arch, g.GetString("general.architecture"));
  GgufWriter w;
  LINEAGE_RETURN_IF_ERROR(testing_util::CopyGgufMetadata(g, w, [&](const std::string& key) {
    return key == arch + ".block_count";
  }));
  w.AddUint32(arch + ".block_count", static_cast<uint32_t>(layers + 1));
  w.AddUint32(arch + ".nextn_predict_layers", 1);
  LINEAGE_RETURN_IF_ERROR(testing_util::CopyGgufTensors(g, w));
  const std::string blk = "blk." + std::to_string(layers) + ".";
  const int64_t H = 128;
  std::vector<float> ones(static_cast<size_t>(2 * H * H), 1.0f);
  auto add = [&](const std::string& name, std::vector<int64_t> ne) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    w.AddTensor(blk + name, ne, 0, static_cast<uint64_t>(n * 4),
                [&ones, n](FileSink& sink) { return sink.Write(ones.data(), static_cast<size_t>(n) * 4); });
  };
  add("nextn.eh_proj.weight", {2 * H, H});
  add("nextn.enorm.weight", {H});
  add("nextn.hnorm.weight", {H});
  add("attn_norm.weight", {H});
  return w.WriteFile(out);
}

// Dense qwen35 and the MoE archs, whose converters append the block the same way.
class GgufMtp : public ::testing::TestWithParam<Arch> {};

TEST_P(GgufMtp, NextnBlockIsNotPartOfTheTrunk) {
  auto spec = LookupShape(GetParam(), "tiny");
  ASSERT_TRUE(spec.ok());
  const std::string arch = GgufArchName(GetParam());
  std::string plain = testing_util::Write(*spec, FileFormat::kGguf, DType::kF32, 6, arch + "_plain.gguf");
  std::string mtp = testing_util::TempPath(arch + "_mtp.gguf");
  {
    auto g = GgufFile::Open(plain);
    ASSERT_TRUE(g.ok());
    Status s = CopyWithMtpBlock(*g, mtp, spec->config.num_layers);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  auto g = GgufFile::Open(mtp);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g->GetInt(arch + ".block_count"), 9);
  auto a = LoadModel(plain);
  auto b = LoadModel(mtp);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->config.num_layers, 8);
  EXPECT_EQ((*b)->weights.layers.size(), 8u);
  const auto tokens = testing_util::SomeTokens(4, 1024);
  EXPECT_EQ(*ReferenceForward(**a, tokens), *ReferenceForward(**b, tokens));
  // Part of a block is no draft head, and says what it lacks.
  EXPECT_FALSE((*b)->weights.mtp.valid());
  EXPECT_NE((*b)->weights.mtp_unavailable.find("blk.8."), std::string::npos) << (*b)->weights.mtp_unavailable;
}

class MtpBlocks : public ::testing::TestWithParam<Arch> {};

TEST_P(MtpBlocks, BindAlikeInBothFormats) {
  auto spec = LookupShape(GetParam(), "tiny");
  ASSERT_TRUE(spec.ok());
  spec->config.mtp_layers = 1;
  const std::string arch = ArchName(GetParam());
  auto gguf = LoadModel(testing_util::Write(*spec, FileFormat::kGguf, DType::kF32, 6, arch + "_mtp_whole.gguf"));
  auto hf = LoadModel(testing_util::Write(*spec, FileFormat::kSafetensors, DType::kF32, 6, arch + "_mtp_whole"));
  ASSERT_TRUE(gguf.ok() && hf.ok()) << gguf.status().ToString() << hf.status().ToString();
  for (const auto* m : {&*gguf, &*hf}) {
    EXPECT_EQ((**m).config.num_layers, spec->config.num_layers);
    EXPECT_EQ((**m).config.mtp_layers, 1);
    EXPECT_TRUE((**m).weights.mtp.valid()) << (**m).weights.mtp_unavailable;
  }
  const auto tokens = testing_util::SomeTokens(12, 1024);
  auto a = ReferenceMtpDrafts(**gguf, tokens, 2);
  auto b = ReferenceMtpDrafts(**hf, tokens, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 2u);
  for (size_t d = 0; d < 2; ++d)
    for (size_t v = 0; v < (*a)[d].size(); ++v) ASSERT_NEAR((*a)[d][v], (*b)[d][v], 1e-9) << d << " " << v;
}

INSTANTIATE_TEST_SUITE_P(Archs, GgufMtp, ::testing::Values(Arch::kQwen3_5, Arch::kQwen3_5Moe, Arch::kQwen3Next),
                         [](const auto& info) { return std::string(ArchName(info.param)); });
INSTANTIATE_TEST_SUITE_P(Archs, MtpBlocks,
                         ::testing::Values(Arch::kQwen3_5, Arch::kQwen3_5Moe, Arch::kQwen3Next, Arch::kGlmDsa,
                                           Arch::kDeepseek32),
                         [](const auto& info) { return std::string(ArchName(info.param)); });

}  // namespace
}  // namespace lineage::model
