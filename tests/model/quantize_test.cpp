// Block quantizers and llama.cpp's preset mixes: our quantizers round-trip
// within a stated error per type, the mix reproduces the per-tensor types of
// the llama.cpp-written files, and a tiny model written by mkmodel at every
// preset loads and runs the reference forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model/encode.h"
#include "model/gguf_file.h"
#include "model/load_model.h"
#include "tools/quant_mix.h"
#include "model/quantize_blocks.h"
#include "tools/reference_forward.h"
#include "model/tensor_plan.h"
#include "test_util.h"

namespace lineage::model {
namespace {

// RMS(decode(quantize(x)) - x) / RMS(x) for Gaussian x, with bounds about
// 1.3x what these quantizers measure (llama-quantize's searches do better).
TEST(Quantize, RoundTripErrorPerType) {
  const std::map<DType, double> bound = {
      {DType::kQ4_0, 0.11}, {DType::kQ5_0, 0.055}, {DType::kQ5_1, 0.05}, {DType::kIQ4_NL, 0.105},
      {DType::kQ4_K, 0.1},  {DType::kQ5_K, 0.05},  {DType::kQ6_K, 0.025}, {DType::kIQ4_XS, 0.105},
      {DType::kQ8_0, 0.007}, {DType::kMXFP4, 0.155}};
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.02f);
  const int64_t n = 4096;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = nd(rng);
  for (const auto& [t, b] : bound) {
    std::vector<uint8_t> bytes(static_cast<size_t>(RowBytes(t, n)));
    EncodeRow(x.data(), n, t, bytes.data());
    TensorView v{"q", t, {n}, bytes.data(), static_cast<int64_t>(bytes.size())};
    DecodeToFloat(v, 0, n, y.data());
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; ++i) {
      err += (y[i] - x[i]) * static_cast<double>(y[i] - x[i]);
      ref += static_cast<double>(x[i]) * x[i];
    }
    const double rel = std::sqrt(err / ref);
    std::printf("  %s: relative RMS error %.4f\n", std::string(Info(t).name).c_str(), rel);
    EXPECT_LT(rel, b) << Info(t).name;
  }
}

TEST(QuantMix, ParsesPresetNames) {
  for (const char* name : {"q4_k_m", "q5_k_m", "q6_k", "q8_0", "q4_0", "iq4_xs", "mxfp4_moe"}) {
    auto p = ParseQuantPreset(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(QuantPresetName(*p), name);
  }
  EXPECT_FALSE(ParseQuantPreset("q3_k_s").has_value());
}

// The preset mix gives every tensor the type llama-quantize gave it in the
// shared files (written from the same f32 model).
TEST(QuantMix, MatchesLlamaQuantizeOnTheSharedFiles) {
  const std::string dir = std::string(LINEAGE_SHARED_DATA) + "/models/";
  const std::map<std::string, QuantPreset> files = {{"tiny-qwen35-Q4_K_M", QuantPreset::kQ4_K_M},
                                                    {"tiny-qwen35-Q5_K_M", QuantPreset::kQ5_K_M},
                                                    {"tiny-qwen35-Q4_0", QuantPreset::kQ4_0},
                                                    {"tiny-qwen35-IQ4_XS", QuantPreset::kIQ4_XS},
                                                    {"tiny-qwen35moe-Q4_K_M", QuantPreset::kQ4_K_M}};
  for (const auto& [name, preset] : files) {
    const std::string path = dir + name + ".gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
    auto model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok());
    int checked = 0;
    for (const PlannedTensor& p : PlanTensors((*model)->config)) {
      const GgufTensorInfo* t = file->FindTensor(p.gguf_name);
      ASSERT_NE(t, nullptr) << p.gguf_name;
      const DType want = *DTypeFromGgml(t->ggml_type);
      EXPECT_EQ(Info(PresetTensorType(preset, (*model)->config, p)).name, Info(want).name) << name << " " << p.gguf_name;
      ++checked;
    }
    EXPECT_EQ(checked, static_cast<int>(file->tensors().size())) << name;
  }
}

// mkmodel's presets on the tiny shape (rows of 128: the K-quants fall back to
// Q5_0 / Q5_1 / Q8_0 / IQ4_NL there, while the 256-wide FFN down projection
// keeps its K type): the file loads, holds the mix, every tensor decodes to
// the f32 model's within its type's error, and the reference forward runs.
// (Logits are not compared with the f32 model's: on these random weights the
// GDN stack amplifies weight rounding ~60x, see "Random values".)
TEST(QuantMix, MkmodelPresetsLoadAndRun) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  const std::string f32_path = testing_util::Write(*spec, FileFormat::kGguf, DType::kF32, 3, "mix_f32.gguf");
  auto f32 = GgufFile::Open(f32_path);
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  const std::vector<int32_t> tokens = {1, 50, 300, 7, 900, 12, 64, 5};
  for (QuantPreset preset : {QuantPreset::kQ4_K_M, QuantPreset::kQ5_K_M, QuantPreset::kQ6_K, QuantPreset::kQ4_0,
                             QuantPreset::kIQ4_XS}) {
    const std::string path = testing_util::TempPath(std::string(QuantPresetName(preset)) + ".gguf");
    WriteOptions o;
    o.format = FileFormat::kGguf;
    o.preset = preset;
    o.seed = 3;
    ASSERT_TRUE(WriteModel(*spec, testing_util::VocabFor(*spec, 3), o, path).ok());
    auto m = LoadModel(path);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok());
    double worst = 0;
    for (const PlannedTensor& p : PlanTensors((*m)->config)) {
      const DType want = PresetTensorType(preset, (*m)->config, p);
      EXPECT_EQ(file->FindTensor(p.gguf_name)->ggml_type, GgmlFromDType(want)) << p.gguf_name;
      auto q = file->Tensor(p.gguf_name), f = f32->Tensor(p.gguf_name);
      ASSERT_TRUE(q.ok() && f.ok()) << p.gguf_name;
      const std::vector<float> qv = DecodeAll(*q), fv = DecodeAll(*f);
      double err = 0, ref = 0;
      for (size_t i = 0; i < qv.size(); ++i) {
        err += (qv[i] - fv[i]) * static_cast<double>(qv[i] - fv[i]);
        ref += static_cast<double>(fv[i]) * fv[i];
      }
      const double rel = std::sqrt(err / ref);
      if (want == DType::kF32) {
        EXPECT_EQ(rel, 0.0) << p.gguf_name;
      }
      EXPECT_LT(rel, 0.11) << p.gguf_name << " " << Info(want).name;  // uniform weights: below the Gaussian figures
      worst = std::max(worst, rel);
    }
    auto logits = ReferenceForward(**m, tokens);
    ASSERT_TRUE(logits.ok()) << logits.status().ToString();
    for (double v : logits->back()) ASSERT_TRUE(std::isfinite(v));
    std::printf("  %s: worst tensor relative RMS error vs f32 %.3f\n", std::string(QuantPresetName(preset)).c_str(),
                worst);
  }
}

}  // namespace
}  // namespace lineage::model
