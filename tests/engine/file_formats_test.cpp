// The optimized forward on models loaded from both file formats (written by
// the model writer, read back through the same loader a real checkpoint
// takes) against ReferenceForward of the same loaded model, and `lineage
// generate` end to end: its ids and --logits-out against the engine run
// in-process. Tolerance 1e-4 relative (f32 weights).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/isa.h"
#include "engine/sampler.h"
#include "engine_test_util.h"
#include "model/load_model.h"
#include "model/test_util.h"
#include "tools/quant_mix.h"

namespace lineage::engine {
namespace {

using model::testing_util::Write;
using testing::MakeEngine;
using testing::MaxRelError;
using testing::WorstErrorAgainstReference;

struct FileCase {
  model::Arch arch;
  model::FileFormat format;
};

class FileFormats : public ::testing::TestWithParam<FileCase> {};

TEST_P(FileFormats, LoadedModelMatchesReference) {
  const FileCase c = GetParam();
  auto spec = model::LookupShape(c.arch, "tiny");
  ASSERT_TRUE(spec.ok());
  const bool gguf = c.format == model::FileFormat::kGguf;
  const std::string name = std::string("engine_") + model::ArchName(c.arch) + (gguf ? ".gguf" : "_hf");
  const std::string path = Write(*spec, c.format, DType::kF32, 5, name);
  auto m = model::LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();

  EXPECT_LT(WorstErrorAgainstReference(*m, 40, 30), 1e-4) << name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FileFormats,
    ::testing::Values(FileCase{model::Arch::kQwen3_5, model::FileFormat::kSafetensors},
                      FileCase{model::Arch::kQwen3_5, model::FileFormat::kGguf},
                      FileCase{model::Arch::kQwen3, model::FileFormat::kSafetensors},
                      FileCase{model::Arch::kQwen3, model::FileFormat::kGguf}),
    [](const auto& info) {
      return std::string(model::ArchName(info.param.arch)) +
             (info.param.format == model::FileFormat::kGguf ? "_gguf" : "_safetensors");
    });

// Kimi K3 with MXFP4 routed experts (tests/model/mxfp4_files_test.cpp), from
// its compressed-tensors checkpoint and from the MXFP4_MOE GGUF: the exact
// path (fp32 activations) within 1e-4 of the reference, as f32 weights. The
// fast path (int8 activations) is far from the reference on this random
// tiny MoE whatever the weights' type (a Q8_0 GGUF of the same seed: about
// 0.5 relative), so the MXFP4 files are held to what that Q8_0 file keeps.
TEST(FileFormats, KimiK3WithMxfp4ExpertsMatchesReference) {
  auto spec = model::LookupShape(model::Arch::kKimiK3, "tiny");
  ASSERT_TRUE(spec.ok());
  auto write = [&](model::FileFormat format, std::optional<model::QuantPreset> preset, const std::string& name) {
    const std::string path = model::testing_util::TempPath(name);
    std::filesystem::remove_all(path);
    model::WriteOptions o;
    o.format = format;
    o.dtype = preset ? DType::kF32 : DType::kQ8_0;
    o.preset = preset;
    o.seed = 5;
    EXPECT_TRUE(model::WriteModel(*spec, model::testing_util::VocabFor(*spec, 5), o, path).ok());
    auto m = model::LoadModel(path);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return *m;
  };
  auto errors = [](const std::shared_ptr<const model::Model>& m) {
    kernels::SetExactQ8(true);
    const double exact = WorstErrorAgainstReference(m, 40, 30);
    kernels::SetExactQ8(false);
    return std::pair{exact, WorstErrorAgainstReference(m, 40, 30)};
  };
  const auto [q8_exact, q8_fast] = errors(write(model::FileFormat::kGguf, std::nullopt, "engine_k3_q8.gguf"));
  EXPECT_LT(q8_exact, 1e-4);
  for (model::FileFormat format : {model::FileFormat::kSafetensors, model::FileFormat::kGguf}) {
    const bool gguf = format == model::FileFormat::kGguf;
    auto m = write(format, model::QuantPreset::kMXFP4_MOE, gguf ? "engine_k3_mxfp4.gguf" : "engine_k3_mxfp4_hf");
    ASSERT_EQ(m->weights.layers[1].moe.gate[0].dtype, DType::kMXFP4);
    const auto [exact, fast] = errors(m);
    EXPECT_LT(exact, 1e-4) << (gguf ? "gguf" : "checkpoint");
    EXPECT_LT(fast, 1.25 * q8_fast) << (gguf ? "gguf" : "checkpoint");
  }
}

std::string RunCommand(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

TEST(GenerateCommand, IdsAndLogitsMatchTheEngine) {
  auto spec = model::LookupShape(model::Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  const std::string path = Write(*spec, model::FileFormat::kGguf, DType::kF32, 9, "engine_generate.gguf");
  const std::string logits_path = path + ".logits";
  const std::vector<int32_t> prompt = {5, 17, 300, 2, 999, 41};
  int status = 0;
  const std::string out = RunCommand(std::string(LINEAGE_BINARY) + " generate --model " + path +
                                         " --prompt-ids 5,17,300,2,999,41 -n 6 --temp 0 --ignore-eos --logits-out " +
                                         logits_path + " 2>/dev/null",
                                     &status);
  ASSERT_EQ(status, 0) << out;

  auto m = model::LoadModel(path);
  ASSERT_TRUE(m.ok());
  auto engine = MakeEngine(*m);
  Sequence seq = engine->NewSequence();
  PrefillResult r;
  ASSERT_TRUE(engine->Prefill(seq, prompt, {}, &r).ok());
  std::ifstream f(logits_path, std::ios::binary);
  std::vector<float> file_logits(static_cast<size_t>(spec->config.vocab) + 1);
  f.read(reinterpret_cast<char*>(file_logits.data()), static_cast<std::streamsize>(file_logits.size() * 4));
  ASSERT_EQ(f.gcount(), spec->config.vocab * 4) << "logits file holds exactly vocab float32 values";
  file_logits.pop_back();
  EXPECT_LT(MaxRelError(file_logits, r.logits), 1e-6);

  std::string want = "ids:";
  std::vector<float> logits = r.logits;
  for (int i = 0; i < 6; ++i) {
    int32_t tok = Argmax(logits);
    want += " " + std::to_string(tok);
    Sequence* one[] = {&seq};
    ASSERT_TRUE(engine->Decode(one, std::span(&tok, 1), &logits).ok());
  }
  EXPECT_NE(out.find(want + "\n"), std::string::npos) << "output:\n" << out << "\nwanted: " << want;
}

TEST(GenerateCommand, RejectsBadIdsAndMissingModel) {
  int status = 0;
  RunCommand(std::string(LINEAGE_BINARY) + " generate --shape tiny --prompt-ids 1,x,3 -n 2 2>/dev/null", &status);
  EXPECT_NE(status, 0);
  RunCommand(std::string(LINEAGE_BINARY) + " generate --model /nonexistent.gguf --prompt-ids 1 -n 2 2>/dev/null",
             &status);
  EXPECT_NE(status, 0);
  RunCommand(std::string(LINEAGE_BINARY) + " generate --shape tiny --prompt-ids 5000 -n 2 2>/dev/null", &status);
  EXPECT_NE(status, 0);
}

}  // namespace
}  // namespace lineage::engine
