// Oracle test: real vocabularies (GGUF files from llama.cpp's models/ folder)
// must reproduce llama.cpp's expected ids for its hard strings, read the way
// llama.cpp's test-tokenizer-0 reads them: inputs separated by
// "\n__ggml_vocab_test__\n", one line of ids per input, no BOS
// (add_special=false) and special tokens not parsed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "tokenizer_test_util.h"

namespace lineage::text {
namespace {

std::string Show(const Tokenizer& t, const std::vector<TokenId>& ids) {
  std::string s;
  for (TokenId id : ids) s += std::to_string(id) + "'" + std::string(t.TokenText(id)) + "' ";
  return s;
}

class VocabOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabOracle, ReproducesLlamaCppIds) {
  std::string base = testing::VocabPath(GetParam());
  if (!std::filesystem::exists(base) || !std::filesystem::exists(base + ".out")) {
    GTEST_SKIP() << "shared data absent: " << base;
  }
  auto tok = LoadTokenizer(base);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  std::vector<testing::OracleCase> cases = testing::ReadOracleCases(base);
  ASSERT_GT(cases.size(), 40u);
  int failures = 0;
  for (const testing::OracleCase& c : cases) {
    std::vector<TokenId> got = tok->Encode(c.text);
    EXPECT_EQ(got, c.ids) << "input: '" << c.text << "'\n got: " << Show(*tok, got)
                          << "\nwant: " << Show(*tok, c.ids);
    failures += got != c.ids;
    // Every oracle string is valid UTF-8 and these vocabularies do not
    // normalize, so decoding gives the input back (SPM's added space is
    // removed again).
    EXPECT_EQ(tok->Decode(got), c.text);
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(RealVocabs, VocabOracle,
                         ::testing::Values("gpt-2", "starcoder", "deepseek-coder", "falcon", "refact", "mpt",
                                           "llama-spm", "phi-3"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace lineage::text
