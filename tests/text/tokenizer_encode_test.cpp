// Encoding rules that the oracle vocabularies do not reach: ignore_merges
// (Llama 3), BOS on request, concurrent use, and the hard Qwen test strings
// (whose vocabularies are not available) round-tripping through the
// synthetic Qwen vocabulary.
#include <gtest/gtest.h>

#include <utf8proc.h>

#include <cstdlib>
#include <thread>

#include "text/byte_level.h"
#include "text/pretokenizer.h"
#include "text/synthetic_vocab.h"
#include "text/tokenizer.h"
#include "tokenizer_test_util.h"

namespace lineage::text {
namespace {

// Byte tokens plus "ab" (made by the merge a+b) and "abc" (no merge makes it).
TokenizerSpec TinySpec() {
  TokenizerSpec spec;
  for (int i = 0; i < 256; ++i) spec.tokens.push_back(ByteToken(ByteTokenOrder()[i]));
  spec.tokens.push_back("ab");
  spec.tokens.push_back("abc");
  spec.tokens.push_back("<s>");
  spec.types.assign(spec.tokens.size(), model::TokenType::kNormal);
  spec.types.back() = model::TokenType::kControl;
  spec.added.push_back({258, /*special=*/true, false, false});
  spec.merges.emplace_back("a", "b");
  spec.pre_patterns = PresetForName("llama-bpe").patterns;
  spec.bos_id = 258;
  return spec;
}

TEST(Encode, IgnoreMergesTakesWholeWordTokens) {
  TokenizerSpec spec = TinySpec();
  auto plain = Tokenizer::Build(spec);
  spec.ignore_merges = true;
  auto whole = Tokenizer::Build(spec);
  ASSERT_TRUE(plain.ok() && whole.ok());
  const TokenId ab = 256, abc = 257, c = plain->TextToId("c");
  EXPECT_EQ(plain->Encode("abc"), (std::vector<TokenId>{ab, c}));
  EXPECT_EQ(whole->Encode("abc"), (std::vector<TokenId>{abc}));
  EXPECT_EQ(whole->Encode("abcab"), (std::vector<TokenId>{ab, c, ab}));  // not a token: BPE as usual
}

TEST(Encode, BosOnlyWhenAskedAndConfigured) {
  TokenizerSpec spec = TinySpec();
  spec.add_bos = true;
  auto tok = Tokenizer::Build(spec);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(tok->Encode("ab"), (std::vector<TokenId>{256}));
  EXPECT_EQ(tok->Encode("ab", {.add_special = true}), (std::vector<TokenId>{258, 256}));
  EXPECT_EQ(tok->Encode("", {.add_special = true}), (std::vector<TokenId>{258}));
  EXPECT_TRUE(tok->Encode("").empty());
  spec.add_bos = false;
  auto no_bos = Tokenizer::Build(spec);
  EXPECT_EQ(no_bos->Encode("ab", {.add_special = true}), (std::vector<TokenId>{256}));
}

TEST(Encode, BadSpecsAreErrors) {
  TokenizerSpec spec = TinySpec();
  spec.types.pop_back();
  EXPECT_FALSE(Tokenizer::Build(spec).ok());
  spec = TinySpec();
  spec.added.push_back({9999, true, false, false});
  EXPECT_FALSE(Tokenizer::Build(spec).ok());
  EXPECT_FALSE(Tokenizer::Build(TokenizerSpec{}).ok());
}

TEST(Encode, ConcurrentEncodingMatchesSequential) {
  auto tok = Tokenizer::FromVocabData(MakeSyntheticVocab(8000, VocabFlavour::kQwen35, 2));
  ASSERT_TRUE(tok.ok());
  std::mt19937 rng(11);
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i) texts.push_back(testing::RandomText(rng, 50));
  std::vector<std::vector<TokenId>> want;
  for (const auto& t : texts) want.push_back(tok->Encode(t));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int th = 0; th < 4; ++th) {
    threads.emplace_back([&, th] {
      Tokenizer copy = *tok;  // copies share tables and are equally valid
      for (int round = 0; round < 5; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) mismatches[th] += copy.Encode(texts[i]) != want[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(Encode, QwenHardStringsRoundTripThroughTheSyntheticVocab) {
  for (const char* name : {"qwen2", "qwen35"}) {
    std::string path = testing::VocabPath(name);
    if (!std::filesystem::exists(path + ".inp")) GTEST_SKIP() << "shared data absent: " << path;
    auto tok = Tokenizer::FromVocabData(
        MakeSyntheticVocab(6000, std::string(name) == "qwen2" ? VocabFlavour::kQwen3 : VocabFlavour::kQwen35, 1));
    ASSERT_TRUE(tok.ok());
    for (const testing::OracleCase& c : testing::ReadOracleCases(path)) {
      utf8proc_uint8_t* nfc = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(c.text.c_str()));
      std::string want(reinterpret_cast<const char*>(nfc));
      std::free(nfc);
      EXPECT_EQ(tok->Decode(tok->Encode(c.text)), want) << c.text;
    }
  }
}

}  // namespace
}  // namespace lineage::text
