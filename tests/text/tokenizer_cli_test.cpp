// `lineage tokenize` end to end: the binary's ids for oracle strings are
// llama.cpp's, and bad arguments fail with a message instead of a crash.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"
#include "tokenizer_json_util.h"
#include "tokenizer_test_util.h"

namespace lineage::text {
namespace {

struct Output {
  int status = -1;
  std::string text;
};

Output RunCli(const std::string& args) {
  Output o;
  std::string cmd = std::string(LINEAGE_BINARY) + " tokenize " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.text.append(buf.data(), n);
  o.status = pclose(p);
  return o;
}

TEST(TokenizeCli, PrintsTheOracleIds) {
  std::string path = testing::VocabPath("gpt-2");
  if (!std::filesystem::exists(path + ".out")) GTEST_SKIP() << "shared data absent: " << path;
  int checked = 0;
  auto dir = std::filesystem::temp_directory_path() / ("lineage_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const testing::OracleCase& c : testing::ReadOracleCases(path)) {
    if (c.text.empty() || checked >= 8) continue;
    auto file = dir / "input.txt";
    std::ofstream(file, std::ios::binary) << c.text;
    Output o = RunCli("--model " + path + " --file " + file.string() + " --ids-only");
    ASSERT_EQ(o.status, 0) << o.text;
    std::string want;
    for (size_t i = 0; i < c.ids.size(); ++i) want += (i ? " " : "") + std::to_string(c.ids[i]);
    EXPECT_EQ(o.text, want + "\n") << c.text;
    ++checked;
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(checked, 8);
  Output o = RunCli("--model " + path + " --text 'Hello world'");
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.text.find("\" world\""), std::string::npos) << o.text;  // the piece column
}

// --chat renders with the model's template (tokenizer_config.json) and
// parses the control tokens of the result. The expected text is Qwen3.5's
// documented shape for one user turn with the generation prompt (spec §6.3).
TEST(TokenizeCli, ChatIsRenderedWithTheModelTemplate) {
  std::string tmpl_path = std::string(LINEAGE_SHARED_DATA) + "/templates/Qwen3.5-4B.jinja";
  if (!std::filesystem::exists(tmpl_path)) GTEST_SKIP() << "shared data absent: " << tmpl_path;
  auto dir = std::filesystem::temp_directory_path() / ("lineage_chat_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  model::VocabData v = MakeSyntheticVocab(3000, VocabFlavour::kQwen35, 2);
  std::ofstream(dir / "tokenizer.json") << testing::JsonFromVocab(v, testing::QwenPreTokenizer(), {{"type", "NFC"}}).dump();
  std::ofstream(dir / "tokenizer_config.json")
      << nlohmann::json{{"eos_token", "<|im_end|>"}, {"chat_template", testing::Slurp(tmpl_path)}}.dump();
  std::ofstream(dir / "chat.json") << R"([{"role": "user", "content": "Hello"}])";

  Output o = RunCli("--model " + dir.string() + " --chat " + (dir / "chat.json").string() + " --ids-only");
  ASSERT_EQ(o.status, 0) << o.text;
  auto tok = LoadTokenizer(dir.string());
  ASSERT_TRUE(tok.ok());
  std::vector<TokenId> want =
      tok->Encode("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n", {.parse_special = true});
  ASSERT_EQ(want.front(), tok->TextToId("<|im_start|>"));
  std::string want_line;
  for (size_t i = 0; i < want.size(); ++i) want_line += (i ? " " : "") + std::to_string(want[i]);
  EXPECT_EQ(o.text, want_line + "\n");

  // A model without a template needs --template.
  std::filesystem::remove(dir / "tokenizer_config.json");
  o = RunCli("--model " + dir.string() + " --chat " + (dir / "chat.json").string());
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.text.find("--template"), std::string::npos) << o.text;
  o = RunCli("--model " + dir.string() + " --chat " + (dir / "chat.json").string() + " --template " + tmpl_path +
             " --ids-only");
  EXPECT_EQ(o.text, want_line + "\n");
  std::filesystem::remove_all(dir);
}

TEST(TokenizeCli, BadModelPathFails) {
  Output o = RunCli("--model /no/such/model --text hi");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.text.find("no such model path"), std::string::npos) << o.text;
}

// A GGUF file is one whatever its name: the tokenizer and the model load
// from a path without the .gguf suffix (the model loader always did; the
// tokenizer went by the suffix), and a file of another kind without a
// suffix fails at once on its magic.
TEST(TokenizeCli, AGgufWithoutItsSuffixLoads) {
  auto dir = std::filesystem::temp_directory_path() / ("lineage_nosuffix_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model").string();
  const std::string mk = std::string(LINEAGE_BINARY) + " mkmodel --shape tiny --format gguf --dtype f32 --out " + model +
                         " > /dev/null 2>&1";
  ASSERT_EQ(std::system(mk.c_str()), 0);
  ASSERT_TRUE(std::filesystem::is_regular_file(model)) << "mkmodel wrote elsewhere";
  Output o = RunCli("--model " + model + " --text 'hello world' --ids-only");
  EXPECT_EQ(o.status, 0) << o.text;
  EXPECT_FALSE(o.text.empty());
  std::ofstream(dir / "notes") << "not a model at all";
  Output bad = RunCli("--model " + (dir / "notes").string() + " --text hi");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.text.find("not a GGUF file"), std::string::npos) << bad.text;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lineage::text
