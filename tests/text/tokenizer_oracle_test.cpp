// Oracle test: real vocabularies (GGUF files from llama.cpp's models/ folder)
// must reproduce llama.cpp's expected ids for its hard strings, read the way
// llama.cpp's test-tokenizer-0 reads them: inputs separated by
// "\n__ggml_vocab_test__\n", one line of ids per input, no BOS
// (add_special=false) and special tokens not parsed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace lineage::text {
namespace {

std::string VocabDir() { return std::string(LINEAGE_SHARED_DATA) + "/vocab/"; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  std::string text;
  std::vector<TokenId> ids;
};

std::vector<Case> ReadCases(const std::string& base) {
  std::string raw = Slurp(base + ".inp");
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::ifstream out(base + ".out");
  std::vector<Case> cases;
  std::string line;
  for (size_t i = 0; std::getline(out, line); ++i) {
    if (i >= inputs.size()) break;
    Case c{inputs[i], {}};
    std::istringstream ls(line);
    for (long id; ls >> id;) c.ids.push_back(static_cast<TokenId>(id));
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(cases.size(), inputs.size()) << base;
  return cases;
}

std::string Show(const Tokenizer& t, const std::vector<TokenId>& ids) {
  std::string s;
  for (TokenId id : ids) s += std::to_string(id) + "'" + std::string(t.TokenText(id)) + "' ";
  return s;
}

class VocabOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabOracle, ReproducesLlamaCppIds) {
  std::string base = VocabDir() + "ggml-vocab-" + GetParam() + ".gguf";
  if (!std::filesystem::exists(base) || !std::filesystem::exists(base + ".out")) {
    GTEST_SKIP() << "shared data absent: " << base;
  }
  auto tok = LoadTokenizer(base);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  std::vector<Case> cases = ReadCases(base);
  ASSERT_GT(cases.size(), 40u);
  int failures = 0;
  for (const Case& c : cases) {
    std::vector<TokenId> got = tok->Encode(c.text);
    EXPECT_EQ(got, c.ids) << "input: '" << c.text << "'\n got: " << Show(*tok, got)
                          << "\nwant: " << Show(*tok, c.ids);
    failures += got != c.ids;
    // Every oracle string is valid UTF-8 and these vocabularies do not
    // normalize, so decoding gives the input back.
    EXPECT_EQ(tok->Decode(got), c.text);
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(BpeVocabs, VocabOracle,
                         ::testing::Values("gpt-2", "starcoder", "deepseek-coder", "falcon", "refact", "mpt"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace lineage::text
