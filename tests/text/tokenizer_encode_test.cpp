// Encoding rules that the oracle vocabularies do not reach: ignore_merges
// (Llama 3), BOS on request, concurrent use, and the hard Qwen test strings
// (whose vocabularies are not available) round-tripping through the
// synthetic Qwen vocabulary.
#include <gtest/gtest.h>

#include <utf8proc.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "text/byte_level.h"
#include "text/pretokenizer.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"
#include "text/word_cache.h"
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

// Many threads that encode one at a time share one word-cache table: the
// tables number the encodes that ran at once, not the threads that ever
// encoded (a server's HTTP workers each keeping 1 MiB held tens of MiB).
TEST(Encode, WordCacheTablesNumberConcurrentEncodesNotThreads) {
  auto tok = Tokenizer::FromVocabData(MakeSyntheticVocab(4000, VocabFlavour::kQwen35, 3));
  ASSERT_TRUE(tok.ok());
  std::mt19937 rng(5);
  std::string text = testing::RandomText(rng, 40);
  std::vector<TokenId> want = tok->Encode(text);
  size_t before = WordCache::TableCount();
  std::mutex one_at_a_time;
  int mismatches = 0;
  std::vector<std::thread> threads;
  for (int th = 0; th < 24; ++th) {
    threads.emplace_back([&] {
      std::lock_guard<std::mutex> lock(one_at_a_time);
      mismatches += tok->Encode(text) != want;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches, 0);
  EXPECT_LE(WordCache::TableCount(), std::max<size_t>(before, 1));
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

#include "model/gguf_file.h"
#include "text/spm.h"

namespace lineage::text {
namespace {

// The SPM word split is an optimization: for a separable vocabulary it must
// give exactly the ids of merging the whole text at once (llama.cpp's way).
TEST(Spm, WordByWordEqualsWholeText) {
  std::string path = testing::VocabPath("llama-spm");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
  auto gguf = model::GgufFile::Open(path);
  ASSERT_TRUE(gguf.ok());
  auto tokens = gguf->GetStringArray("tokenizer.ggml.tokens");
  auto scores = gguf->GetFloatArray("tokenizer.ggml.scores");
  ASSERT_TRUE(tokens.ok() && scores.ok());
  std::unordered_map<std::string_view, TokenId> map;
  for (size_t i = 0; i < tokens->size(); ++i) map.emplace((*tokens)[i], static_cast<TokenId>(i));
  std::array<TokenId, 256> bytes;
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    bytes[b] = map.count(hex) ? map[hex] : kNoToken;
  }
  SpmModel spm(&map, std::vector<float>(scores->begin(), scores->end()), bytes);
  ASSERT_TRUE(spm.word_separable());
  std::mt19937 rng(23);
  for (int i = 0; i < 200; ++i) {
    std::string text = testing::RandomText(rng, 1 + rng() % 40), escaped;
    for (char c : text) escaped += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
    std::vector<TokenId> whole, by_word;
    spm.Encode(escaped, &whole);
    ForEachSpmWord(escaped, [&](std::string_view w) { spm.Encode(w, &by_word); });
    ASSERT_EQ(whole, by_word) << text;
  }
}

}  // namespace
}  // namespace lineage::text
