#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/gguf_file.h"

namespace lineage::model {
namespace {

std::string VocabPath(const std::string& name) {
  return std::string(LINEAGE_SHARED_DATA) + "/vocab/ggml-vocab-" + name + ".gguf";
}

TEST(GgufFile, ReadsRealVocabularyMetadata) {
  std::string path = VocabPath("gpt-2");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
  auto g = GgufFile::Open(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->version(), 3u);
  auto model = g->GetString("tokenizer.ggml.model");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(*model, "gpt2");
  auto tokens = g->GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(tokens->size(), 50257u);
  EXPECT_EQ((*tokens)[0], "!");
  auto merges = g->GetStringArray("tokenizer.ggml.merges");
  ASSERT_TRUE(merges.ok());
  EXPECT_GT(merges->size(), 40000u);
  EXPECT_FALSE(g->GetInt("tokenizer.ggml.tokens").ok());  // wrong type is an error, not a crash
  EXPECT_EQ(g->GetInt("no.such.key").status().code(), StatusCode::kNotFound);
}

TEST(GgufFile, EveryTruncationIsRejectedWithoutCrashing) {
  std::string path = VocabPath("gpt-2");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::string tmp = testing::TempDir() + "/truncated.gguf";
  for (size_t cut : {size_t{0}, size_t{3}, size_t{10}, size_t{23}, size_t{100}, bytes.size() / 3,
                     bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(tmp, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    auto g = GgufFile::Open(tmp);
    EXPECT_FALSE(g.ok()) << "cut at " << cut;
    if (!g.ok()) {
      EXPECT_NE(g.status().message().find(tmp), std::string::npos);
    }
  }
  std::remove(tmp.c_str());
}

TEST(GgufFile, RejectsBadMagicAndVersion) {
  std::string tmp = testing::TempDir() + "/bad.gguf";
  std::ofstream(tmp, std::ios::binary) << std::string("GGUX\3\0\0\0", 8) << std::string(16, '\0');
  auto g = GgufFile::Open(tmp);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("magic"), std::string::npos);
  std::ofstream(tmp, std::ios::binary) << std::string("GGUF\1\0\0\0", 8) << std::string(16, '\0');
  g = GgufFile::Open(tmp);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  std::remove(tmp.c_str());
}

}  // namespace
}  // namespace lineage::model
