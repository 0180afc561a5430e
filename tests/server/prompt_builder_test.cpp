// PromptBuilder on the real Qwen3.5 chat template (shared test data) with a
// synthetic Qwen3.5 vocabulary: history end, anchor, reasoning mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/api/anthropic_request.h"
#include "server/generation/prompt_builder.h"
#include "server/api/responses_request.h"
#include "tools/synthetic_vocab.h"

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

  // Turn N+1's prompt keeps turn N's up to N's history end, token for token
  // (the rest of N is the generation prompt, which N+1 renders as the reply).
  void ExpectExtends(const ApiRequest& n, const ApiRequest& next) {
    auto p = builder_->Build(n);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto q = builder_->Build(next);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    ASSERT_GT(p->history_end_tokens, 0);
    EXPECT_GE(CommonPrefixTokens(p->tokens, q->tokens), p->history_end_tokens) << p->text << "\n----\n" << q->text;
  }

  static std::string Fixture(const std::string& name) {
    std::ifstream in(std::string(LINEAGE_SOURCE_DIR) + "/tests/server/fixtures/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::unique_ptr<PromptBuilder> Builder(PromptBuilderOptions o) {
    auto t = ChatTemplate::Create(source_, "", "<|im_end|>");
    EXPECT_TRUE(t.ok());
    return std::make_unique<PromptBuilder>(tokenizer_, std::move(t).value(), o);
  }

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
  EXPECT_EQ(pa->anchor_tokens, CommonPrefixTokens(pa->tokens, pb->tokens));
  size_t block_end = pa->text.find("<|im_end|>\n") + std::string("<|im_end|>\n").size();
  EXPECT_GE(pa->anchor_tokens, static_cast<int64_t>(Encode(pa->text.substr(0, block_end)).size()) - 2);
  EXPECT_EQ(pb->anchor_tokens, pa->anchor_tokens);
  // One distinct system + tools text and one system text, tokenized once each.
  EXPECT_EQ(builder_->anchor_memo_size(), 2u);

  // No system prompt and no tools: no anchor.
  auto none = builder_->Build(Chat(json::array({{{"role", "user"}, {"content", "hi"}}}), false));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->anchor_tokens, 0);
}

TEST_F(PromptBuilderTest, SystemEndIsWhatPromptsWithAnotherToolListShare) {
  // Qwen3's template renders the system text, then the tools: a sub-agent
  // with other tools shares the system text, which ends below the anchor.
  // Qwen3.5's puts the tools first: no system end.
  const std::string qwen3 = std::string(LINEAGE_SHARED_DATA) + "/templates/Qwen-Qwen3-0.6B.jinja";
  std::ifstream in(qwen3);
  std::stringstream ss;
  ss << in.rdbuf();
  auto t = ChatTemplate::Create(ss.str(), "", "<|im_end|>");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  PromptBuilder qwen3_builder(tokenizer_, std::move(t).value());
  json conv = json::array({{{"role", "system"}, {"content", std::string(600, 'x') + " be terse."}},
                           {{"role", "user"}, {"content", "first question"}}});
  ApiRequest main = Chat(conv), sub = Chat(conv, false);
  sub.tools = json::parse(R"([{"type": "function", "function": {"name": "read", "description": "read a file",
      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])");
  auto pm = qwen3_builder.Build(main);
  auto ps = qwen3_builder.Build(sub);
  ASSERT_TRUE(pm.ok() && ps.ok());
  ASSERT_GT(pm->system_end_tokens, 0);
  EXPECT_LT(pm->system_end_tokens, pm->anchor_tokens);
  EXPECT_EQ(ps->system_end_tokens, pm->system_end_tokens);
  const int64_t shared = CommonPrefixTokens(pm->tokens, ps->tokens);
  EXPECT_GE(shared, pm->system_end_tokens);
  EXPECT_LT(shared, pm->anchor_tokens);
  // It covers the system text: everything up to its last character.
  const size_t text_end = pm->text.find(" be terse.") + std::string(" be terse.").size();
  EXPECT_GE(pm->system_end_tokens, static_cast<int64_t>(Encode(pm->text.substr(0, text_end)).size()) - 2);
  // Without tools the anchor is the system end: no second point.
  auto plain = qwen3_builder.Build(Chat(conv, false));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->system_end_tokens, 0);
  auto tools_first = builder_->Build(main);
  ASSERT_TRUE(tools_first.ok());
  EXPECT_EQ(tools_first->system_end_tokens, 0);
  EXPECT_GT(tools_first->anchor_tokens, 0);
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

// Rendering stops once the text is longer than the context's tokens could
// encode: a template that multiplies a message is refused as over the
// context after a bounded render, not rendered to the template's own 64 MB
// limit first.
TEST_F(PromptBuilderTest, RenderingStopsPastWhatTheContextCanHold) {
  auto t = ChatTemplate::Create("{% for i in range(50000) %}{{ messages[0]['content'] }}{% endfor %}", "", "");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  PromptBuilder amplifying(tokenizer_, std::move(t).value());
  ApiRequest r = Chat(json::array({{{"role", "user"}, {"content", std::string(2000, 'x')}}}), false);
  Result<BuiltPrompt> unbounded = amplifying.Build(r);  // 100 MB of text: the template's own limit
  ASSERT_FALSE(unbounded.ok());
  EXPECT_EQ(unbounded.status().code(), StatusCode::kInvalidArgument) << unbounded.status().ToString();
  EXPECT_NE(unbounded.status().message().find("output exceeds"), std::string::npos) << unbounded.status().ToString();
  Result<BuiltPrompt> bounded = amplifying.Build(r, 1000);
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.status().code(), StatusCode::kOutOfRange) << bounded.status().ToString();
  EXPECT_NE(bounded.status().message().find("more than 1000 tokens"), std::string::npos) << bounded.status().ToString();
}

json User(const std::string& text) { return {{"role", "user"}, {"content", text}}; }
json Assistant(const std::string& text) { return {{"role", "assistant"}, {"content", text}}; }
json SystemNote(const std::string& text) { return {{"role", "system"}, {"content", text}}; }

TEST_F(PromptBuilderTest, MidConversationSystemMessagesRenderAndLaterTurnsExtendEarlierOnes) {
  // The template raises "System message must be at the beginning" for these.
  json turn1 = json::array({System(), User("hi"), SystemNote("note: be brief")});
  json turn2 = turn1;
  turn2.push_back(Assistant("Hello."));
  turn2.push_back(SystemNote("note: the user changed directory"));
  turn2.push_back(User("list files"));
  json turn3 = turn2;
  turn3.push_back(Assistant("a.txt"));
  turn3.push_back(User("thanks"));
  auto p1 = builder_->Build(Chat(turn1));
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  EXPECT_NE(p1->text.find("note: be brief"), std::string::npos);
  ExpectExtends(Chat(turn1), Chat(turn2));
  ExpectExtends(Chat(turn2), Chat(turn3));
  auto p3 = builder_->Build(Chat(turn3));
  ASSERT_TRUE(p3.ok());
  // Folded into the user turn before it; after an assistant turn, a user turn
  // of its own; as Claude Code folds them (a system-reminder block).
  EXPECT_NE(p3->text.find("hi\n<system-reminder>\nnote: be brief\n</system-reminder><|im_end|>"), std::string::npos)
      << p3->text;
  EXPECT_NE(p3->text.find("<|im_start|>user\n<system-reminder>\nnote: the user changed directory\n</system-reminder>"
                          "<|im_end|>"),
            std::string::npos)
      << p3->text;
  // The anchor (system + tools) is unchanged by the notes.
  auto plain = builder_->Build(Chat(json::array({System(), User("hi")})));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(p3->anchor_tokens, plain->anchor_tokens);
}

TEST_F(PromptBuilderTest, AFoldedSystemMessageRendersLikeClaudeCodesOwnFold) {
  // Claude Code re-sends a conversation whose system message it could not
  // send as a user turn with the message as a system-reminder text block.
  json as_system = json::array({System(), User("What is in README.md?"), SystemNote("Agent types: claude.")});
  json as_block = json::array(
      {System(), User("What is in README.md?\n<system-reminder>\nAgent types: claude.\n</system-reminder>\n")});
  auto a = builder_->Build(Chat(as_system));
  auto b = builder_->Build(Chat(as_block));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->text, b->text);
}

TEST_F(PromptBuilderTest, LeadingSystemMessagesAreJoined) {
  // Codex: instructions, then a developer message.
  auto p = builder_->Build(Chat(json::array({System(), SystemNote("sandbox: read-only"), User("hi")})));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NE(p->text.find("You are terse.\n\nsandbox: read-only<|im_end|>"), std::string::npos) << p->text;
}

TEST_F(PromptBuilderTest, ClaudeCodeFixtureWithAMidConversationSystemMessageRenders) {
  auto r1 = ParseAnthropicMessagesRequest(Fixture("claude_code_session1.json"));
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  auto p1 = builder_->Build(*r1);
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  EXPECT_EQ(p1->text.find("x-anthropic-billing-header"), std::string::npos);
  EXPECT_NE(p1->text.find("switched the output style"), std::string::npos);
  // The next turn of that session: the reply and a new user message.
  json body = json::parse(Fixture("claude_code_session1.json"));
  body["messages"].push_back({{"role", "assistant"}, {"content", {{{"type", "text"}, {"text", "src/ has main.cpp."}}}}});
  body["messages"].push_back({{"role", "user"}, {"content", "and tests/?"}});
  auto r2 = ParseAnthropicMessagesRequest(body.dump());
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  ExpectExtends(*r1, *r2);
}

TEST_F(PromptBuilderTest, BillingHeaderIsStrippedSoTwoSessionsShareTheWholeSystemAndTools) {
  auto s1 = ParseAnthropicMessagesRequest(Fixture("claude_code_session1.json"));
  auto s2 = ParseAnthropicMessagesRequest(Fixture("claude_code_session2.json"));
  ASSERT_TRUE(s1.ok() && s2.ok());
  auto p1 = builder_->Build(*s1);
  auto p2 = builder_->Build(*s2);
  ASSERT_TRUE(p1.ok() && p2.ok());
  ASSERT_GT(p1->anchor_tokens, 0);
  EXPECT_EQ(p1->anchor_tokens, p2->anchor_tokens);
  EXPECT_GE(CommonPrefixTokens(p1->tokens, p2->tokens), p1->anchor_tokens);
  size_t system_end = p1->text.find("<|im_end|>");
  EXPECT_GE(p1->anchor_tokens, static_cast<int64_t>(Encode(p1->text.substr(0, system_end)).size()) - 2);

  // Kept on request: rendered where the client put it, and the sessions part early.
  auto keep = Builder({.keep_billing_header = true});
  auto k1 = keep->Build(*s1);
  auto k2 = keep->Build(*s2);
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_NE(k1->text.find("x-anthropic-billing-header: cc_version=2.1.197.a1f"), std::string::npos);
  EXPECT_LT(CommonPrefixTokens(k1->tokens, k2->tokens), p1->anchor_tokens);
}

TEST_F(PromptBuilderTest, CodexTurnsRenderAndTheSecondExtendsTheFirst) {
  auto t1 = ParseOpenAiResponsesRequest(Fixture("codex_turn1.json"));
  auto t2 = ParseOpenAiResponsesRequest(Fixture("codex_turn2.json"));
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  auto p2 = builder_->Build(*t2);
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  EXPECT_NE(p2->text.find("<tool_response>"), std::string::npos);
  EXPECT_NE(p2->text.find("<function=shell>"), std::string::npos);
  ExpectExtends(*t1, *t2);
}

}  // namespace
}  // namespace lineage::server
