// Kimi's tokenizer files: tiktoken.model (base64 token bytes by rank) with
// tokenizer_config.json, read into the same BPE as GGUF. The merges derived
// from ranks are checked by hand on small vocabularies; the Kimi-shaped
// synthetic vocabulary tokenizes identically in its GGUF form (VocabData:
// tokens + merges) and its Hugging Face form (tiktoken.model + config).
#include <gtest/gtest.h>

#include "model/tokenizer_files.h"
#include "text/base64.h"
#include "text/byte_level.h"
#include "tools/synthetic_vocab.h"
#include "text/tiktoken.h"
#include "text/tokenizer.h"

namespace lineage::text {
namespace {

std::vector<std::string> ByteTokens() {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
  return t;
}

TEST(Base64, RoundTripsAndRefusesBadText) {
  for (const std::string& s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                               std::string("abcd"), std::string("\xff\x00\x10 x", 5)}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)).value_or("?"), s);
  }
  EXPECT_EQ(Base64Encode("Man"), "TWFu");
  EXPECT_EQ(Base64Encode("Ma"), "TWE=");
  EXPECT_EQ(Base64Encode(" the"), "IHRoZQ==");
  EXPECT_FALSE(Base64Decode("TWF"));     // not a multiple of 4
  EXPECT_FALSE(Base64Decode("TW=u"));    // padding inside
  EXPECT_FALSE(Base64Decode("TW*u"));    // outside the alphabet
  EXPECT_FALSE(Base64Decode("TQ==TWFu"));  // padding before the end
}

TEST(Tiktoken, FileRoundTripsAndBadFilesAreErrors) {
  std::vector<std::string> tokens = ByteTokens();
  tokens.push_back(" the");
  const std::string text = MakeTiktokenModel(tokens);
  auto back = ParseTiktokenModel(text, "t.model");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, tokens);
  EXPECT_NE(text.find("IHRoZQ== 256\n"), std::string::npos);
  EXPECT_FALSE(ParseTiktokenModel("", "t").ok());
  EXPECT_FALSE(ParseTiktokenModel("YQ== 1\n", "t").ok());  // rank 1 first
  EXPECT_FALSE(ParseTiktokenModel("YQ==\n", "t").ok());    // no rank
  EXPECT_FALSE(ParseTiktokenModel("Y!== 0\n", "t").ok());  // bad base64
  auto bad = ParseTiktokenModel("YQ== 0\nYg== x\n", "t.model");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("t.model:2"), std::string::npos) << bad.status().ToString();
}

// Each token's merge is the split tiktoken's joining reaches with lower
// ranks only: in "abc", "ab" joins first (rank 256 < 257 of "bc").
TEST(Tiktoken, MergesAreTheSplitsOfLowerRanks) {
  std::vector<std::string> tokens = ByteTokens();
  for (const char* t : {"ab", "bc", "abc", "bcd", "abcd", "xyz"}) tokens.push_back(t);
  const auto merges = TiktokenMerges(tokens);
  // "xyz": neither "xy" nor "yz" is a token, so tiktoken never reaches it.
  // "abcd": "ab" (256) joins first, then "abc" (258), leaving "abc" + "d".
  EXPECT_EQ(merges, (std::vector<std::string>{"a b", "b c", "ab c", "bc d", "abc d"}));
}

TEST(Tiktoken, KimiVocabularyAtTheRealSizeHasTheRealSpecialIds) {
  model::VocabData v = MakeSyntheticVocab(163840, VocabFlavour::kKimi, 7);
  ASSERT_EQ(v.tokens.size(), 163840u);
  EXPECT_EQ(v.pre, "kimi-k2");
  EXPECT_EQ(v.tokens[163584], "[BOS]");
  EXPECT_EQ(v.tokens[163585], "[EOS]");
  EXPECT_EQ(v.tokens[163586], "<|im_end|>");
  EXPECT_EQ(v.tokens[163587], "<|im_user|>");
  EXPECT_EQ(v.tokens[163588], "<|im_assistant|>");
  EXPECT_EQ(v.tokens[163594], "<|im_system|>");
  EXPECT_EQ(v.tokens[163595], "<|tool_calls_section_begin|>");
  EXPECT_EQ(v.tokens[163597], "<|tool_call_begin|>");
  EXPECT_EQ(v.tokens[163598], "<|tool_call_argument_begin|>");
  EXPECT_EQ(v.tokens[163601], "<|im_middle|>");
  EXPECT_EQ(v.tokens[163589], "<|reserved_token_163589|>");
  EXPECT_EQ(v.tokens[163838], "[UNK]");
  EXPECT_EQ(v.tokens[163839], "[PAD]");
  EXPECT_EQ(v.token_types[163594], model::TokenType::kControl);
  EXPECT_EQ(v.token_types[163597], model::TokenType::kUserDefined);
  EXPECT_EQ(v.token_types[163583], model::TokenType::kNormal);
  EXPECT_EQ(v.bos_id, 163584);
  EXPECT_EQ(v.eos_id, 163586);
  auto ranks = ParseTiktokenModel(v.tiktoken_model, "tiktoken.model");
  ASSERT_TRUE(ranks.ok());
  EXPECT_EQ(ranks->size(), 163584u);
}

// The two forms of one vocabulary: the GGUF one (tokens + the derived
// merges) and the Hugging Face one (tiktoken.model + tokenizer_config.json).
TEST(Tiktoken, GgufAndHuggingFaceFormsTokenizeIdentically) {
  model::VocabData v = MakeSyntheticVocab(6000, VocabFlavour::kKimi, 3);
  v.chat_template = "{{ messages }}";
  auto gguf_form = Tokenizer::FromVocabData(v);
  ASSERT_TRUE(gguf_form.ok()) << gguf_form.status().ToString();
  auto hf_form = TokenizerFromTiktoken(v.tiktoken_model, model::MakeTokenizerConfigJson(v, 4096), "",
                                       "tiktoken.model", "tokenizer_config.json");
  ASSERT_TRUE(hf_form.ok()) << hf_form.status().ToString();
  EXPECT_EQ(hf_form->chat_template(), v.chat_template);
  EXPECT_EQ(hf_form->vocab_size(), gguf_form->vocab_size());
  const char* texts[] = {
      "Hello World's 12345 tokens, HELLO again.\n\n  indented\tcode();",
      "<|im_system|>system<|im_middle|>You are Kimi.<|im_end|><|im_user|>user<|im_middle|>hi<|im_end|>",
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>"
      "{\"path\": \"README.md\"}<|tool_call_end|><|tool_calls_section_end|>",
      "我想在apple工作，東京で働きたい。 emoji 🙂 and ümlauts",
      "def f(x):\n    return {\"a\": [1, 2, 3]}  # comment\r\n",
  };
  for (const char* t : texts) {
    for (bool special : {false, true}) {
      const auto a = gguf_form->Encode(t, {.parse_special = special});
      const auto b = hf_form->Encode(t, {.parse_special = special});
      EXPECT_EQ(a, b) << t;
      EXPECT_EQ(hf_form->Decode(b), t);
    }
  }
  // Special tokens are single ids at Kimi's offsets; the tool-call markers
  // are matched even in plain text, as in the original.
  EXPECT_EQ(hf_form->Encode("<|im_middle|>", {.parse_special = true}),
            (std::vector<int32_t>{static_cast<int32_t>(v.tokens.size()) - 256 + 17}));
  EXPECT_EQ(hf_form->Encode("<|tool_call_begin|>").size(), 1u);
}

// Newer repositories keep the template in chat_template.jinja: it serves
// when tokenizer_config.json has none, and the config's own wins.
TEST(Tiktoken, TemplateFileServesWhenTheConfigHasNone) {
  model::VocabData v = MakeSyntheticVocab(1024, VocabFlavour::kKimi, 3);
  const std::string bare = model::MakeTokenizerConfigJson(v, 4096);
  auto from_file = TokenizerFromTiktoken(v.tiktoken_model, bare, "{{ 'file' }}", "tiktoken.model", "c.json");
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  EXPECT_EQ(from_file->chat_template(), "{{ 'file' }}");
  v.chat_template = "{{ 'config' }}";
  auto from_config = TokenizerFromTiktoken(v.tiktoken_model, model::MakeTokenizerConfigJson(v, 4096), "{{ 'file' }}",
                                           "tiktoken.model", "c.json");
  ASSERT_TRUE(from_config.ok()) << from_config.status().ToString();
  EXPECT_EQ(from_config->chat_template(), "{{ 'config' }}");
  EXPECT_EQ(from_config->eos_id(), 768 + 2);  // eos_token "<|im_end|>" from the config
}

TEST(Tiktoken, ConfigIdsInsideTheRanksAreAnError) {
  model::VocabData v = MakeSyntheticVocab(1024, VocabFlavour::kKimi, 3);
  const std::string config = R"({"added_tokens_decoder": {"5": {"content": "<x>", "special": true}}})";
  auto t = TokenizerFromTiktoken(v.tiktoken_model, config, "", "tiktoken.model", "tokenizer_config.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("added_tokens_decoder"), std::string::npos) << t.status().ToString();
}

}  // namespace
}  // namespace lineage::text
