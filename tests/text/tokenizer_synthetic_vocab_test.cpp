// The synthetic vocabulary: layout (byte tokens, merges, special ids),
// determinism, and that a tokenizer built from it round-trips text with
// multi-character tokens.
#include <gtest/gtest.h>

#include <set>

#include "text/byte_level.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

using model::TokenType;

TEST(SyntheticVocab, Qwen35RealSizeHasTheRealSpecialIds) {
  model::VocabData v = MakeSyntheticVocab(248320, VocabFlavour::kQwen35, 7);
  ASSERT_EQ(v.tokens.size(), 248320u);
  ASSERT_EQ(v.token_types.size(), 248320u);
  EXPECT_EQ(v.pre, "qwen35");
  EXPECT_EQ(v.tokens[248044], "<|endoftext|>");
  EXPECT_EQ(v.tokens[248045], "<|im_start|>");
  EXPECT_EQ(v.tokens[248046], "<|im_end|>");
  EXPECT_EQ(v.tokens[248058], "<tool_call>");
  EXPECT_EQ(v.tokens[248059], "</tool_call>");
  EXPECT_EQ(v.tokens[248066], "<tool_response>");
  EXPECT_EQ(v.tokens[248067], "</tool_response>");
  EXPECT_EQ(v.tokens[248068], "<think>");
  EXPECT_EQ(v.tokens[248069], "</think>");
  EXPECT_EQ(v.token_types[248045], TokenType::kControl);
  EXPECT_EQ(v.token_types[248068], TokenType::kUserDefined);
  EXPECT_EQ(v.token_types[248100], TokenType::kUnused);
  EXPECT_EQ(v.eos_id, 248046);
  // Every id below the specials is a normal token made by a merge.
  EXPECT_EQ(v.merges.size(), 248044u - 256u);
  EXPECT_EQ(v.token_types[248043], TokenType::kNormal);
  std::set<std::string> unique(v.tokens.begin(), v.tokens.end());
  EXPECT_EQ(unique.size(), v.tokens.size());
}

TEST(SyntheticVocab, Qwen3RealSizeHasTheRealSpecialIds) {
  model::VocabData v = MakeSyntheticVocab(151936, VocabFlavour::kQwen3, 7);
  ASSERT_EQ(v.tokens.size(), 151936u);
  EXPECT_EQ(v.pre, "qwen2");
  EXPECT_EQ(v.tokens[151643], "<|endoftext|>");
  EXPECT_EQ(v.tokens[151645], "<|im_end|>");
  EXPECT_EQ(v.tokens[151657], "<tool_call>");
  EXPECT_EQ(v.tokens[151665], "<tool_response>");
  EXPECT_EQ(v.tokens[151667], "<think>");
  EXPECT_EQ(v.tokens[151668], "</think>");
  EXPECT_EQ(v.tokens[151669], "[PAD151669]");
}

TEST(SyntheticVocab, OtherSizesPackSpecialsAtTheEnd) {
  model::VocabData v = MakeSyntheticVocab(4096, VocabFlavour::kQwen35, 1);
  ASSERT_EQ(v.tokens.size(), 4096u);
  EXPECT_EQ(v.tokens.back(), "<|audio_pad|>");
  EXPECT_EQ(v.tokens[4096 - 33], "<|endoftext|>");
  EXPECT_EQ(v.merges.size(), 4096u - 33 - 256);
}

TEST(SyntheticVocab, EveryMergeIsValid) {
  model::VocabData v = MakeSyntheticVocab(20000, VocabFlavour::kQwen35, 3);
  std::map<std::string, size_t> id;
  for (size_t i = 0; i < v.tokens.size(); ++i) id[v.tokens[i]] = i;
  for (size_t r = 0; r < v.merges.size(); ++r) {
    const std::string& m = v.merges[r];
    size_t sp = m.find(' ', 1);
    ASSERT_NE(sp, std::string::npos);
    std::string a = m.substr(0, sp), b = m.substr(sp + 1);
    ASSERT_TRUE(id.count(a) && id.count(b) && id.count(a + b)) << m;
    // Merge r creates token 256 + r from tokens made before it.
    EXPECT_EQ(id[a + b], 256 + r);
    EXPECT_LT(id[a], 256 + r);
    EXPECT_LT(id[b], 256 + r);
  }
  for (int b = 0; b < 256; ++b) EXPECT_EQ(v.tokens[b], ByteToken(ByteTokenOrder()[b]));
}

TEST(SyntheticVocab, SameSeedSameVocabularyOtherSeedDiffers) {
  model::VocabData a = MakeSyntheticVocab(30000, VocabFlavour::kQwen35, 11);
  model::VocabData b = MakeSyntheticVocab(30000, VocabFlavour::kQwen35, 11);
  model::VocabData c = MakeSyntheticVocab(30000, VocabFlavour::kQwen35, 12);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.merges, b.merges);
  EXPECT_NE(a.merges, c.merges);
}

TEST(SyntheticVocab, TokenizerRoundTripsAndProducesMultiCharTokens) {
  auto tok = Tokenizer::FromVocabData(MakeSyntheticVocab(248320, VocabFlavour::kQwen35, 7));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const std::string text =
      "The server reads the request and returns the response. 服务器收到请求以后，先把消息转换成文本。\n"
      "int main() { return 0; }  {\"name\": \"value\", \"id\": 42}";
  std::vector<TokenId> ids = tok->Encode(text);
  EXPECT_EQ(tok->Decode(ids), text);
  // Realistic: far fewer tokens than bytes, and common words are one token.
  EXPECT_LT(ids.size() * 3, text.size());
  EXPECT_EQ(tok->Encode(" the").size(), 1u);
  EXPECT_EQ(tok->Encode(" request").size(), 1u);
  // Chat markers are single tokens when special parsing is on.
  std::vector<TokenId> chat = tok->Encode("<|im_start|>user\nhi<|im_end|>", {.parse_special = true});
  ASSERT_GE(chat.size(), 3u);
  EXPECT_EQ(chat.front(), 248045);
  EXPECT_EQ(chat.back(), 248046);
  EXPECT_TRUE(tok->IsEndOfGeneration(248046));
  EXPECT_TRUE(tok->IsEndOfGeneration(248044));
  // <think> is an added, non-special token: matched even in plain text.
  EXPECT_EQ(tok->Encode("<think>"), std::vector<TokenId>{248068});
}

}  // namespace
}  // namespace lineage::text
