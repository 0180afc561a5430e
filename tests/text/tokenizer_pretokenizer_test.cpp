// Pre-tokenizer regexes: the splits the Qwen patterns must make, worked out
// by hand from the patterns in spec §6.1 (no Qwen vocabulary is available
// here, so these are the Qwen-specific checks).
#include <gtest/gtest.h>

#include "text/pretokenizer.h"

namespace lineage::text {
namespace {

std::vector<std::string> SplitWith(const std::string& pre, const std::string& text) {
  auto p = Pretokenizer::Create(PresetForName(pre).patterns);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  std::vector<Span> spans;
  p->Split(text, Span{0, static_cast<uint32_t>(text.size())}, &spans);
  std::vector<std::string> out;
  size_t expect_begin = 0;
  for (Span s : spans) {
    EXPECT_EQ(s.begin, expect_begin) << "pieces must tile the input";
    expect_begin = s.end;
    out.emplace_back(text.substr(s.begin, s.end - s.begin));
  }
  EXPECT_EQ(expect_begin, text.size());
  return out;
}

using V = std::vector<std::string>;

TEST(QwenPretokenizer, SpaceRunsLeaveTheLastSpaceToTheNextWord) {
  EXPECT_EQ(SplitWith("qwen2", "Hello   world"), (V{"Hello", "  ", " world"}));
  EXPECT_EQ(SplitWith("qwen2", "end   "), (V{"end", "   "}));
}

TEST(QwenPretokenizer, DigitsSplitOneAtATime) {
  EXPECT_EQ(SplitWith("qwen35", "x1234"), (V{"x", "1", "2", "3", "4"}));
}

TEST(QwenPretokenizer, ContractionsAreCaseInsensitive) {
  EXPECT_EQ(SplitWith("qwen2", "I'M here"), (V{"I", "'M", " here"}));
  EXPECT_EQ(SplitWith("qwen2", "we'Ll"), (V{"we", "'Ll"}));
}

TEST(QwenPretokenizer, Qwen35KeepsCombiningMarksWithLetters) {
  const std::string text = "e\u0301x";
  EXPECT_EQ(SplitWith("qwen35", text), (V{text}));
  EXPECT_EQ(SplitWith("qwen2", text), (V{"e", "\u0301x"}));
}

TEST(QwenPretokenizer, NewlinesAndPunctuation) {
  EXPECT_EQ(SplitWith("qwen2", "a\rb"), (V{"a", "\r", "b"}));
  EXPECT_EQ(SplitWith("qwen2", "hi!!!\n\nyo"), (V{"hi", "!!!\n\n", "yo"}));
  EXPECT_EQ(SplitWith("qwen2", "x \n\n y"), (V{"x", " \n\n", " y"}));
  EXPECT_EQ(SplitWith("qwen2", "我想在apple工作"), (V{"我想在apple工作"}));
}

// kimi-k2 (tokenization_kimi.py): Han runs split off Latin letters, words
// GPT-4o style (case runs, contraction kept), digits in threes.
TEST(KimiPretokenizer, HanRunsSplitFromOtherLetters) {
  bool known = false;
  PresetForName("kimi-k2", &known);
  EXPECT_TRUE(known);
  EXPECT_EQ(SplitWith("kimi-k2", "我想在apple工作"), (V{"我想在", "apple", "工作"}));
  EXPECT_EQ(SplitWith("kimi-k2", "Hello World's 12345"), (V{"Hello", " World's", " ", "123", "45"}));
  EXPECT_EQ(SplitWith("kimi-k2", "HELLO x\n\ny"), (V{"HELLO", " x", "\n\n", "y"}));
}

TEST(Pretokenizer, InvalidUtf8IsIsolatedNotFatal) {
  EXPECT_EQ(SplitWith("qwen2", "ab\xFF" "cd"), (V{"ab", "\xFF", "cd"}));
}

TEST(Pretokenizer, BadRegexIsAnError) {
  auto p = Pretokenizer::Create({"(unclosed"});
  EXPECT_FALSE(p.ok());
}

TEST(Pretokenizer, LongWhitespaceRunDoesNotFail) {
  std::string text(200000, ' ');
  text += "x";
  V pieces = SplitWith("qwen35", text);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[1], " x");
}

TEST(Pretokenizer, KnownAndUnknownPresetNames) {
  bool known = false;
  PresetForName("qwen35", &known);
  EXPECT_TRUE(known);
  EXPECT_TRUE(PresetForName("qwen35").nfc);
  EXPECT_TRUE(PresetForName("llama-bpe").ignore_merges);
  PresetForName("no-such-tokenizer", &known);
  EXPECT_FALSE(known);
}

}  // namespace
}  // namespace lineage::text
