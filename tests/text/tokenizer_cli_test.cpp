// `lineage tokenize` end to end: the binary's ids for oracle strings are
// llama.cpp's, and bad arguments fail with a message instead of a crash.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>

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

TEST(TokenizeCli, BadModelPathFails) {
  Output o = RunCli("--model /no/such/model --text hi");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.text.find("no such model path"), std::string::npos) << o.text;
}

}  // namespace
}  // namespace lineage::text
