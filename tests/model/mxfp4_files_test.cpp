// MXFP4 weights in both file forms (docs/model-files.md, "MXFP4"): GGUF's
// type 39 blocks, and the compressed-tensors "mxfp4-pack-quantized" codes
// and scales of Kimi K3's released checkpoints, which the loader moves into
// GGUF's block order. The layout is checked against the converter's
// documented element order on a hand-built row; the two forms that
// `lineage mkmodel --dtype mxfp4_moe` writes of one seed hold the same
// blocks, byte for byte; broken packed tensors and other quantizations are
// clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/dequant.h"
#include "core/quant_blocks.h"
#include "model/gguf_file.h"
#include "model/load_model.h"
#include "model/mxfp4_checkpoint.h"
#include "test_util.h"
#include "tools/quant_mix.h"

namespace lineage::model {
namespace {

std::string WriteK3(FileFormat format, const std::string& name) {
  ModelSpec spec = *LookupShape(Arch::kKimiK3, "tiny");
  const std::string path = testing_util::TempPath(name);
  std::filesystem::remove_all(path);
  WriteOptions o;
  o.format = format;
  o.preset = QuantPreset::kMXFP4_MOE;
  o.seed = 7;
  const Status s = WriteModel(spec, testing_util::VocabFor(spec, 7), o, path);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return path;
}

// The converter's order (element 2i in the low nibble of byte i, 2i + 1 in
// the high one) on a row whose element k has code k % 16 and a known scale:
// decoded, element k must be 2^(e - 127) times E2M1 value k % 16.
TEST(Mxfp4Files, PackedCodesKeepTheirElementOrder) {
  const int64_t cols = 64;
  std::vector<uint8_t> codes(cols / 2), scales = {120, 131};
  for (int64_t i = 0; i < cols / 2; ++i) codes[i] = static_cast<uint8_t>((2 * i) % 16 | ((2 * i + 1) % 16) << 4);
  const RawTensor packed{"U8", {1, cols / 2}, codes.data(), cols / 2}, scale{"U8", {1, 2}, scales.data(), 2};
  auto blocks = RepackMxfp4("w", packed, scale);
  ASSERT_TRUE(blocks.ok()) << blocks.status().ToString();
  ASSERT_EQ(blocks->size(), 2 * sizeof(quant::BlockMXFP4));
  std::vector<float> y(cols);
  quant::DequantizeBlocks(DType::kMXFP4, blocks->data(), 2, y.data());
  const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, 0, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int64_t k = 0; k < cols; ++k)
    EXPECT_EQ(y[k], e2m1[k % 16] * std::ldexp(1.0f, scales[k / 32] - 127)) << "element " << k;
  // And back: the writer's unpacking gives the same bytes.
  std::vector<uint8_t> codes2(cols / 2), scales2(2);
  UnpackMxfp4Row(blocks->data(), cols, codes2.data(), scales2.data());
  EXPECT_EQ(codes2, codes);
  EXPECT_EQ(scales2, scales);
}

// The K3 checkpoint's experts (packed, one tensor per expert) and the GGUF's
// (type 39, stacked) are the same MXFP4 blocks; the rest follows the preset
// (bf16 in the checkpoint, Q8_0 in the GGUF, as llama-quantize's MXFP4_MOE).
TEST(Mxfp4Files, KimiK3CheckpointAndGgufHoldTheSameBlocks) {
  const std::string hf = WriteK3(FileFormat::kSafetensors, "k3_mxfp4_hf");
  const std::string gguf = WriteK3(FileFormat::kGguf, "k3_mxfp4.gguf");
  auto config = nlohmann::json::parse(std::ifstream(hf + "/config.json"));
  EXPECT_EQ(config["quantization_config"]["quant_method"], "compressed-tensors");
  EXPECT_EQ(config["quantization_config"]["format"], "mxfp4-pack-quantized");
  auto a = LoadModel(hf), b = LoadModel(gguf);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const ModelConfig& c = (*a)->config;
  int64_t compared = 0;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    if (!c.moe_layer(l)) continue;
    const MoeWeights& x = (*a)->weights.layers[l].moe;
    const MoeWeights& y = (*b)->weights.layers[l].moe;
    ASSERT_EQ(x.gate.size(), static_cast<size_t>(c.experts.count));
    for (int64_t e = 0; e < c.experts.count; ++e) {
      for (auto [u, v] : {std::pair{&x.gate[e], &y.gate[e]}, {&x.up[e], &y.up[e]}, {&x.down[e], &y.down[e]}}) {
        ASSERT_EQ(u->dtype, DType::kMXFP4) << "layer " << l << " expert " << e;
        ASSERT_EQ(v->dtype, DType::kMXFP4);
        ASSERT_EQ(u->shape, v->shape);
        const int64_t bytes = u->rows() * RowBytes(DType::kMXFP4, u->cols());
        EXPECT_EQ(std::memcmp(u->data, v->data, static_cast<size_t>(bytes)), 0) << "layer " << l << " expert " << e;
        ++compared;
      }
    }
    EXPECT_EQ(x.latent_down.dtype, DType::kBF16);
    EXPECT_EQ(y.latent_down.dtype, DType::kQ8_0);
  }
  EXPECT_GT(compared, 0);
  auto file = GgufFile::Open(gguf);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->metadata().at("general.file_type").as_uint, 38u);  // LLAMA_FTYPE_MOSTLY_MXFP4_MOE
}

// A checkpoint whose experts are stacked (qwen3_5_moe) cannot take the
// compressed-tensors form: refused before anything is written.
TEST(Mxfp4Files, StackedExpertCheckpointsAreRefusedBeforeWriting) {
  ModelSpec spec = *LookupShape(Arch::kQwen3_5Moe, "tiny");
  const std::string path = testing_util::TempPath("qwen35moe_mxfp4_hf");
  std::filesystem::remove_all(path);
  WriteOptions o;
  o.format = FileFormat::kSafetensors;
  o.preset = QuantPreset::kMXFP4_MOE;
  const Status s = WriteModel(spec, testing_util::VocabFor(spec, 1), o, path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("one tensor per expert"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(path));
}

// Each breakage names the tensor or the field.
TEST(Mxfp4Files, BrokenPackedWeightsAreClearErrors) {
  std::vector<uint8_t> bytes(64, 0x11);
  const RawTensor codes{"U8", {2, 16}, bytes.data(), 32};
  auto bad_dtype = RepackMxfp4("w", RawTensor{"BF16", {2, 16}, bytes.data(), 64}, RawTensor{"U8", {2, 1}, bytes.data(), 2});
  ASSERT_FALSE(bad_dtype.ok());
  EXPECT_NE(bad_dtype.status().message().find("U8"), std::string::npos);
  auto bad_scales = RepackMxfp4("w", codes, RawTensor{"U8", {2, 2}, bytes.data(), 4});
  ASSERT_FALSE(bad_scales.ok());
  EXPECT_NE(bad_scales.status().message().find("do not match"), std::string::npos);
  auto bad_row = RepackMxfp4("w", RawTensor{"U8", {2, 8}, bytes.data(), 16}, RawTensor{"U8", {2, 1}, bytes.data(), 2});
  ASSERT_FALSE(bad_row.ok());
  EXPECT_NE(bad_row.status().message().find("blocks of 32"), std::string::npos);

  // A checkpoint whose scale tensor is gone: the error names it.
  const std::string hf = WriteK3(FileFormat::kSafetensors, "k3_mxfp4_broken");
  {
    std::ifstream in(hf + "/model.safetensors", std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string victim = "layers.1.block_sparse_moe.experts.0.w1.weight_scale";
    const size_t at = data.find(victim);
    ASSERT_NE(at, std::string::npos);
    data[at + victim.size() - 5] = 'X';  // weight_Xcale: same length, so the header stays valid
    std::ofstream(hf + "/model.safetensors", std::ios::binary) << data;
  }
  testing_util::ExpectError(hf, {"experts.0.w1.weight_scale", "missing"});

  // Another quantization (FP8, as DeepSeek-V3.2's release) is refused by name.
  auto config = nlohmann::json::parse(std::ifstream(hf + "/config.json"));
  config["quantization_config"] = {{"quant_method", "fp8"}};
  std::ofstream(hf + "/config.json") << config.dump(2);
  testing_util::ExpectError(hf, {"quantization_config", "fp8", "not read"});
}

}  // namespace
}  // namespace lineage::model
