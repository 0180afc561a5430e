// Loading from Hugging Face tokenizer.json: a JSON built from the GPT-2 GGUF
// must reproduce llama.cpp's oracle ids too, a Qwen-style JSON must encode
// exactly like the same vocabulary loaded from VocabData, and bad files are
// errors, never crashes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/gguf_file.h"
#include "text/pretokenizer.h"
#include "tools/synthetic_vocab.h"
#include "text/tokenizer.h"
#include "tokenizer_json_util.h"
#include "tokenizer_test_util.h"

namespace lineage::text {
namespace {

using nlohmann::json;
using testing::JsonFromVocab;
using testing::QwenPreTokenizer;
using testing::RandomText;
using testing::VocabPath;

TEST(TokenizerJson, Gpt2JsonReproducesTheOracle) {
  std::string path = VocabPath("gpt-2");
  if (!std::filesystem::exists(path + ".out")) GTEST_SKIP() << "shared data absent: " << path;
  auto gguf = model::GgufFile::Open(path);
  ASSERT_TRUE(gguf.ok());
  model::VocabData v;
  auto tokens = gguf->GetStringArray("tokenizer.ggml.tokens");
  auto types = gguf->GetIntArray("tokenizer.ggml.token_type");
  auto merges = gguf->GetStringArray("tokenizer.ggml.merges");
  ASSERT_TRUE(tokens.ok() && types.ok() && merges.ok());
  v.tokens = *tokens;
  for (int64_t t : *types) v.token_types.push_back(model::TokenType(t));
  v.merges = *merges;
  json j = JsonFromVocab(v, {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}, nullptr);
  auto tok = Tokenizer::FromHfJson(j.dump());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();

  size_t n = 0;
  for (const testing::OracleCase& c : testing::ReadOracleCases(path)) {
    EXPECT_EQ(tok->Encode(c.text), c.ids) << c.text;
    ++n;
  }
  EXPECT_GT(n, 40u);
}

TEST(TokenizerJson, QwenStyleJsonMatchesTheGgufStylePath) {
  model::VocabData v = MakeSyntheticVocab(12000, VocabFlavour::kQwen35, 4);
  json j = JsonFromVocab(v, QwenPreTokenizer(), {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}}}});
  json cfg = {{"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}, {"bos_token", nullptr},
              {"add_bos_token", false}, {"chat_template", "{{ messages }}"}};
  auto from_json = Tokenizer::FromHfJson(j.dump(), cfg.dump());
  ASSERT_TRUE(from_json.ok()) << from_json.status().ToString();
  auto from_vocab = Tokenizer::FromVocabData(v);
  ASSERT_TRUE(from_vocab.ok());
  EXPECT_EQ(from_json->eos_id(), from_vocab->eos_id());
  EXPECT_EQ(from_json->chat_template(), "{{ messages }}");
  EXPECT_EQ(from_json->bos_id(), kNoToken);
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string s = RandomText(rng, 1 + rng() % 30);
    if (i % 3 == 0) s += "<|im_start|>user\n<think>x</think><|im_end|>";
    for (bool special : {false, true}) {
      ASSERT_EQ(from_json->Encode(s, {.parse_special = special}), from_vocab->Encode(s, {.parse_special = special}))
          << s;
    }
  }
}

TEST(TokenizerJson, SpecialTokensAreParsedOnlyWhenAsked) {
  model::VocabData v = MakeSyntheticVocab(6000, VocabFlavour::kQwen3, 4);
  auto tok = Tokenizer::FromHfJson(JsonFromVocab(v, QwenPreTokenizer(), {{"type", "NFC"}}).dump());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const TokenId im_start = tok->TextToId("<|im_start|>");
  const TokenId think = tok->TextToId("<think>");
  ASSERT_NE(im_start, kNoToken);
  std::vector<TokenId> plain = tok->Encode("<|im_start|>");
  EXPECT_GT(plain.size(), 1u);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), im_start), 0);
  EXPECT_EQ(tok->Decode(plain), "<|im_start|>");
  EXPECT_EQ(tok->Encode("<|im_start|>", {.parse_special = true}), std::vector<TokenId>{im_start});
  // Non-special added tokens are matched either way.
  EXPECT_EQ(tok->Encode("<think>"), std::vector<TokenId>{think});
  // Control tokens can be left out of decoded text.
  EXPECT_EQ(tok->Decode(std::vector<TokenId>{im_start, think}, {.render_special = false}), "<think>");
}

TEST(TokenizerJson, LstripAndRstripSwallowWhitespace) {
  model::VocabData v = MakeSyntheticVocab(3000, VocabFlavour::kQwen3, 4);
  json j = JsonFromVocab(v, QwenPreTokenizer(), nullptr);
  for (json& a : j["added_tokens"]) {
    if (a["content"] == "<|im_end|>") a["lstrip"] = a["rstrip"] = true;
  }
  auto tok = Tokenizer::FromHfJson(j.dump());
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(tok->Encode("hi  <|im_end|> \n yo", {.parse_special = true}),
            tok->Encode("hi<|im_end|>yo", {.parse_special = true}));
}

TEST(TokenizerJson, BadFilesAreErrors) {
  EXPECT_FALSE(Tokenizer::FromHfJson("not json").ok());
  EXPECT_FALSE(Tokenizer::FromHfJson("[1, 2]").ok());
  EXPECT_FALSE(Tokenizer::FromHfJson(R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})").ok());
  EXPECT_FALSE(Tokenizer::FromHfJson(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}})").ok());
  EXPECT_FALSE(Tokenizer::FromHfJson(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}})").ok());
  EXPECT_FALSE(Tokenizer::FromHfJson(
                   R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                       "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(("}, "behavior": "Isolated"}})")
                   .ok());
  EXPECT_FALSE(Tokenizer::FromHfJson(
                   R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": {"type": "Lowercase"}})")
                   .ok());
  EXPECT_FALSE(
      Tokenizer::FromHfJson(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "byte_fallback": true}})").ok());
}

TEST(LoadTokenizer, DirectoryGgufAndErrors) {
  auto dir = std::filesystem::temp_directory_path() / ("lineage_tok_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  model::VocabData v = MakeSyntheticVocab(2000, VocabFlavour::kQwen35, 4);
  std::ofstream(dir / "tokenizer.json") << JsonFromVocab(v, QwenPreTokenizer(), {{"type", "NFC"}}).dump();
  std::ofstream(dir / "tokenizer_config.json") << json{{"eos_token", {{"content", "<|im_end|>"}}}}.dump();
  auto tok = LoadTokenizer(dir.string());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ(tok->eos_id(), tok->TextToId("<|im_end|>"));
  EXPECT_EQ(tok->Decode(tok->Encode("hello world")), "hello world");
  std::filesystem::remove_all(dir);

  EXPECT_EQ(LoadTokenizer("/no/such/model").status().code(), StatusCode::kNotFound);
  std::string bert = VocabPath("bert-bge");
  if (std::filesystem::exists(bert)) {
    EXPECT_EQ(LoadTokenizer(bert).status().code(), StatusCode::kUnsupported);
  }
}

}  // namespace
}  // namespace lineage::text

namespace lineage::text {
namespace {

using testing::JsonFromVocab;
using testing::QwenPreTokenizer;

// Random byte edits of a valid tokenizer.json: each must load or fail with
// a status, never crash or allocate without bound.
TEST(TokenizerJson, MutatedFilesNeverCrash) {
  model::VocabData v = MakeSyntheticVocab(400, VocabFlavour::kQwen35, 4);
  const std::string good = JsonFromVocab(v, QwenPreTokenizer(), {{"type", "NFC"}}).dump();
  ASSERT_TRUE(Tokenizer::FromHfJson(good).ok());
  std::mt19937 rng(17);
  const char kBytes[] = "{}[]\":,0123456789-eE \\abn";
  int loaded = 0;
  for (int i = 0; i < 300; ++i) {
    std::string s = good;
    for (int k = 0, n = 1 + rng() % 4; k < n; ++k) {
      size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = kBytes[rng() % (sizeof(kBytes) - 1)]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        default: s.insert(at, 1, kBytes[rng() % (sizeof(kBytes) - 1)]); break;
      }
    }
    auto t = Tokenizer::FromHfJson(s);
    if (t.ok()) {
      ++loaded;
      (void)t->Encode("hello <|im_start|> world", {.parse_special = true});
    }
  }
  EXPECT_LT(loaded, 300);  // the edits do break files
}

}  // namespace
}  // namespace lineage::text

namespace lineage::text {
namespace {

// Llama 3 style: the BOS comes from a TemplateProcessing nested in a
// Sequence post-processor, and is added only when asked.
TEST(TokenizerJson, TemplateProcessingInASequenceAddsBos) {
  model::VocabData v = MakeSyntheticVocab(1000, VocabFlavour::kQwen3, 4);
  json j = testing::JsonFromVocab(v, testing::QwenPreTokenizer(), nullptr);
  j["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "add_prefix_space": true},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]}]})");
  auto tok = Tokenizer::FromHfJson(j.dump());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const TokenId eot = tok->TextToId("<|endoftext|>");
  EXPECT_EQ(tok->bos_id(), eot);
  EXPECT_TRUE(tok->add_bos());
  std::vector<TokenId> with = tok->Encode("hi", {.add_special = true});
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with.front(), eot);
  EXPECT_EQ(std::vector<TokenId>(with.begin() + 1, with.end()), tok->Encode("hi"));
}

}  // namespace
}  // namespace lineage::text
