// PromptBuilder on the real Qwen3.5 chat template (shared test data) with a
// synthetic Qwen3.5 vocabulary: history end, anchor, reasoning mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/prompt_builder.h"
#include "text/synthetic_vocab.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

class PromptBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string path = std::string(LINEAGE_SHARED_DATA) + "/templates/Qwen3.5-4B.jinja";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared data absent: " << path;
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    source_ = ss.str();
    auto tok = text::Tokenizer::FromVocabData(text::MakeSyntheticVocab(4096, text::VocabFlavour::kQwen35, 1));
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    tokenizer_ = *tok;
    auto t = ChatTemplate::Create(source_, "", "<|im_end|>");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    builder_ = std::make_unique<PromptBuilder>(tokenizer_, std::move(t).value());
  }

  ApiRequest Chat(const json& messages, bool tools = true) {
    ApiRequest r;
    r.messages = messages;
    if (tools)
      r.tools = json::parse(R"([{"type": "function", "function": {"name": "grep", "description": "search",
          "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}}}}])");
    return r;
  }

  std::vector<int32_t> Encode(const std::string& s) { return tokenizer_.Encode(s, {.parse_special = true}); }

  std::string source_;
  text::Tokenizer tokenizer_;
  std::unique_ptr<PromptBuilder> builder_;
};

json System() { return {{"role", "system"}, {"content", "You are terse."}}; }

TEST_F(PromptBuilderTest, HistoryEndIsWhereTheGenerationPromptBegins) {
  json conv = json::array({System(), {{"role", "user"}, {"content", "find TODOs"}}});
  auto p = builder_->Build(Chat(conv));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The template's generation prompt opens a thinking block.
  EXPECT_TRUE(p->reasoning_open);
  const std::string gen = "<|im_start|>assistant\n<think>\n";
  ASSERT_GE(p->text.size(), gen.size());
  EXPECT_EQ(p->text.substr(p->text.size() - gen.size()), gen);
  std::string history = p->text.substr(0, p->text.size() - gen.size());
  EXPECT_EQ(p->history_end_tokens, static_cast<int64_t>(Encode(history).size()));
  // The prompt is exactly the tokens of its text.
  EXPECT_EQ(p->tokens, Encode(p->text));

  // The next turn renders the reply without <think>: it leaves this prompt
  // after the history end but before its end, which is why the history end
  // is captured.
  json next = conv;
  next.push_back({{"role", "assistant"}, {"content", "None found."}});
  next.push_back({{"role", "user"}, {"content", "ok"}});
  auto q = builder_->Build(Chat(next));
  ASSERT_TRUE(q.ok());
  int64_t shared = CommonPrefixTokens(p->tokens, q->tokens);
  EXPECT_GE(shared, p->history_end_tokens);
  EXPECT_LT(shared, static_cast<int64_t>(p->tokens.size()));
}

TEST_F(PromptBuilderTest, AnchorCoversTheSystemAndToolsBlock) {
  json a = json::array({System(), {{"role", "user"}, {"content", "first question"}}});
  json b = json::array({System(), {{"role", "user"}, {"content", "another one"}}});
  auto pa = builder_->Build(Chat(a));
  auto pb = builder_->Build(Chat(b));
  ASSERT_TRUE(pa.ok() && pb.ok());
  // Every conversation with this system prompt and tools starts with the
  // system block and the opening of the first user turn; two conversations
  // whose user texts differ from their first character share exactly that.
  // The anchor is that shared prefix minus the 2 tokens of slack.
  EXPECT_EQ(pa->anchor_tokens, CommonPrefixTokens(pa->tokens, pb->tokens) - 2);
  size_t block_end = pa->text.find("<|im_end|>\n") + std::string("<|im_end|>\n").size();
  EXPECT_GE(pa->anchor_tokens, static_cast<int64_t>(Encode(pa->text.substr(0, block_end)).size()) - 2);
  EXPECT_EQ(pb->anchor_tokens, pa->anchor_tokens);
  EXPECT_EQ(builder_->anchor_memo_size(), 1u);  // one distinct prefix text, tokenized once

  // No system prompt and no tools: no anchor.
  auto none = builder_->Build(Chat(json::array({{{"role", "user"}, {"content", "hi"}}}), false));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->anchor_tokens, 0);
}

TEST_F(PromptBuilderTest, TemplateErrorsAreInvalidArgument) {
  auto p = builder_->Build(Chat(json::array({System()})));  // the template demands a user turn
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("No user query"), std::string::npos) << p.status().message();
}

TEST_F(PromptBuilderTest, EnableThinkingFalseClosesTheThinkingBlock) {
  ApiRequest r = Chat(json::array({{{"role", "user"}, {"content", "hi"}}}), false);
  r.template_kwargs["enable_thinking"] = false;
  auto p = builder_->Build(r);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->reasoning_open);
}

// A prompt longer than the limit is refused while tokenizing: the encoder
// stops soon after the limit instead of encoding the whole text, and a
// prompt within the limit gets exactly its unlimited tokens.
TEST_F(PromptBuilderTest, TokenizingStopsPastTheLimit) {
  std::string words;
  for (int i = 0; i < 20000; ++i) words += "word" + std::to_string(i % 97) + " ";
  json messages = json::array({System(), {{"role", "user"}, {"content", words}}});
  Result<BuiltPrompt> whole = builder_->Build(Chat(messages));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_GT(whole->tokens.size(), 20000u);
  Result<BuiltPrompt> within = builder_->Build(Chat(messages), static_cast<int64_t>(whole->tokens.size()));
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->tokens, whole->tokens);
  Result<BuiltPrompt> over = builder_->Build(Chat(messages), 1000);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(over.status().message().find("more than 1000 tokens"), std::string::npos) << over.status().ToString();
  // The encoder itself: at most one pre-tokenizer piece past the limit.
  std::vector<int32_t> cut = tokenizer_.Encode(words, {.parse_special = true, .max_tokens = 100});
  EXPECT_GT(cut.size(), 100u);
  EXPECT_LT(cut.size(), 120u);
}

}  // namespace
}  // namespace lineage::server
