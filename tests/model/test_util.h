// Helpers shared by the model tests: writing tiny random models to a
// temporary directory and comparing logits.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>
#include <string>
#include <vector>

#include "tools/chat_templates.h"
#include "model/load_model.h"
#include "model/shapes.h"
#include "tools/write_model.h"
#include "tools/synthetic_vocab.h"

namespace lineage::model::testing_util {

// A path in a directory private to this process (ctest runs test cases in
// parallel processes, and other checkouts may run the same tests), removed
// when the process exits.
inline std::string TempPath(const std::string& name) {
  struct Dir {
    std::string path = ::testing::TempDir() + "/lineage_model_test_" + std::to_string(::getpid());
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path + "/" + name;
}

inline VocabData VocabFor(const ModelSpec& spec, uint64_t seed) {
  const bool qwen35 = spec.config.arch == Arch::kQwen3_5 || spec.config.arch == Arch::kQwen3_5Moe;
  auto flavour = qwen35 ? text::VocabFlavour::kQwen35 : text::VocabFlavour::kQwen3;
  VocabData v = text::MakeSyntheticVocab(spec.config.vocab, flavour, seed);
  v.chat_template = ChatTemplateFor(spec.config.arch);
  return v;
}

// Writes `spec` and returns the path (a directory for safetensors, a file for gguf).
inline std::string Write(const ModelSpec& spec, FileFormat format, DType dtype, uint64_t seed,
                         const std::string& name, uint64_t shard_bytes = 0) {
  std::string path = TempPath(name);
  std::filesystem::remove_all(path);
  WriteOptions o;
  o.format = format;
  o.dtype = dtype;
  o.seed = seed;
  o.shard_bytes = shard_bytes;
  Status s = WriteModel(spec, VocabFor(spec, seed), o, path);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return path;
}

// A fresh tiny qwen3_5 model (bf16) in each format, for tests that break it.
inline std::string FreshGguf(const std::string& name) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  return Write(*spec, FileFormat::kGguf, DType::kBF16, 1, name);
}
inline std::string FreshHf(const std::string& name) {
  auto spec = LookupShape(Arch::kQwen3_5, "tiny");
  return Write(*spec, FileFormat::kSafetensors, DType::kBF16, 1, name);
}

// LoadModel(path) fails with a message holding every one of `words`.
inline void ExpectError(const std::string& path, const std::vector<std::string>& words) {
  auto m = LoadModel(path);
  ASSERT_FALSE(m.ok()) << "loaded a broken model";
  const std::string& msg = m.status().message();
  for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
}

// max_i |a_i - b_i| / max_i |b_i| over all positions.
inline double MaxRelErr(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  double num = 0, den = 0;
  for (size_t t = 0; t < a.size(); ++t)
    for (size_t i = 0; i < a[t].size(); ++i) {
      num = std::max(num, std::fabs(a[t][i] - b[t][i]));
      den = std::max(den, std::fabs(b[t][i]));
    }
  return num / den;
}

inline std::vector<int32_t> SomeTokens(int n, int vocab) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back((i * 131 + 17) % vocab);
  return t;
}

}  // namespace lineage::model::testing_util
