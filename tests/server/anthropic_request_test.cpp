#include <gtest/gtest.h>

#include "server/api/anthropic_request.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

TEST(AnthropicRequest, TranslatesAToolLoopIntoTheChatTemplateShape) {
  json body = {
      {"model", "claude-x"},
      {"max_tokens", 100},
      {"system", {{{"type", "text"}, {"text", "You are "}}, {{"type", "text"}, {"text", "helpful."}}}},
      {"messages",
       {{{"role", "user"}, {"content", "read a.txt"}},
        {{"role", "assistant"},
         {"content",
          {{{"type", "thinking"}, {"thinking", "use read"}, {"signature", "sig"}},
           {{"type", "text"}, {"text", "Reading."}},
           {{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "read"}, {"input", {{"path", "a.txt"}}}}}}},
        {{"role", "user"},
         {"content",
          {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", {{{"type", "text"}, {"text", "hi"}}}}},
           {{"type", "text"}, {"text", "thanks"}}}}}}},
      {"tools", {{{"name", "read"}, {"description", "read a file"}, {"input_schema", {{"type", "object"}}}},
                 {{"type", "web_search_20250305"}, {"name", "web_search"}}}},
      {"tool_choice", {{"type", "any"}}},
      {"stop_sequences", {"###"}},
      {"temperature", 0.2},
      {"top_k", 5},
      {"stream", true},
      {"thinking", {{"type", "enabled"}, {"budget_tokens", 1024}}}};
  auto r = ParseAnthropicMessagesRequest(body.dump());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->api, ApiKind::kAnthropicMessages);
  json want = json::array({
      {{"role", "system"}, {"content", "You are helpful."}},
      {{"role", "user"}, {"content", "read a.txt"}},
      {{"role", "assistant"},
       {"content", "Reading."},
       {"reasoning_content", "use read"},
       {"tool_calls",
        {{{"id", "toolu_1"}, {"type", "function"}, {"function", {{"name", "read"}, {"arguments", {{"path", "a.txt"}}}}}}}}},
      {{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "hi"}},
      {{"role", "user"}, {"content", "thanks"}},
  });
  EXPECT_EQ(r->messages, want);
  // The server tool is dropped; the custom tool is in OpenAI function form.
  json want_tools = json::array(
      {{{"type", "function"},
        {"function", {{"name", "read"}, {"description", "read a file"}, {"parameters", {{"type", "object"}}}}}}});
  EXPECT_EQ(r->tools, want_tools);
  EXPECT_EQ(r->tool_choice, ToolChoice::kRequired);
  EXPECT_EQ(r->stop, std::vector<std::string>{"###"});
  EXPECT_EQ(r->sampling.max_tokens, 100);
  EXPECT_FLOAT_EQ(r->sampling.temperature, 0.2f);
  EXPECT_EQ(r->sampling.top_k, 5);
  EXPECT_TRUE(r->stream);
  EXPECT_EQ(r->template_kwargs["enable_thinking"], true);
}

TEST(AnthropicRequest, SystemAsStringAndNamedToolChoice) {
  auto r = ParseAnthropicMessagesRequest(
      R"({"max_tokens": 5, "system": "S", "messages": [{"role": "user", "content": "u"}],
          "tool_choice": {"type": "tool", "name": "ls"}, "thinking": {"type": "disabled"}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->messages[0], json({{"role", "system"}, {"content", "S"}}));
  EXPECT_EQ(r->tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(r->tool_choice_name, "ls");
  EXPECT_EQ(r->template_kwargs["enable_thinking"], false);
}

TEST(AnthropicRequest, MidConversationSystemMessagesAreKept) {
  // Claude Code's beta mid-conversation-system-2026-04-07 (issue 13's reproduction).
  auto r = ParseAnthropicMessagesRequest(
      R"({"model": "x", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"},
          {"role": "system", "content": "note"}, {"role": "system", "content": [{"type": "text", "text": "more"}]}]})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  json want = json::array({{{"role", "user"}, {"content", "hi"}},
                           {{"role", "system"}, {"content", "note"}},
                           {{"role", "system"}, {"content", "more"}}});
  EXPECT_EQ(r->messages, want);
}

TEST(AnthropicRequest, ALeadingBillingHeaderBlockIsTakenOutOfTheSystemText) {
  auto r = ParseAnthropicMessagesRequest(
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "system": [
          {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.abc; cc_entrypoint=cli; cch=12345;"},
          {"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": " Be brief."}]})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->billing_header, "x-anthropic-billing-header: cc_version=2.1.197.abc; cc_entrypoint=cli; cch=12345;");
  EXPECT_EQ(r->messages[0], json({{"role", "system"}, {"content", "You are Claude Code. Be brief."}}));

  // Only the leading block: the same text later is the client's own.
  auto later = ParseAnthropicMessagesRequest(
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "system": [
          {"type": "text", "text": "S. "}, {"type": "text", "text": "x-anthropic-billing-header: a"}]})");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->billing_header, "");
  EXPECT_EQ(later->messages[0]["content"], "S. x-anthropic-billing-header: a");

  // A system prompt that is only the header: no system message.
  auto only = ParseAnthropicMessagesRequest(
      R"({"max_tokens": 8, "messages": [{"role": "user", "content": "hi"}],
          "system": [{"type": "text", "text": "x-anthropic-billing-header: a"}]})");
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->messages.size(), 1u);
  EXPECT_EQ(only->messages[0]["role"], "user");
}

TEST(AnthropicRequest, BadInputNamesTheField) {
  struct Case {
    const char* body;
    const char* needle;
  } cases[] = {
      {R"({"messages": [{"role": "user", "content": "u"}]})", "max_tokens"},
      {R"({"max_tokens": 5})", "messages"},
      {R"({"max_tokens": 5, "messages": [{"role": "wizard", "content": "u"}]})", "wizard"},
      {R"({"max_tokens": 5, "messages": [{"role": "system", "content": [{"type": "image"}]}]})", "image"},
      {R"({"max_tokens": 5, "messages": [{"role": "user"}]})", "content"},
      {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image"}]}]})", "image"},
      {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result"}]}]})", "tool_use_id"},
      {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "wat"}]}]})", "wat"},
      {R"({"max_tokens": 5, "system": 3, "messages": [{"role": "user", "content": "u"}]})", "system"},
      {R"({"max_tokens": 0, "messages": [{"role": "user", "content": "u"}]})", "max_tokens"},
      {R"({"max_tokens": 5, "messages": [{"role": "user", "content": "u"}], "tools": [{"name": "x"}]})", "input_schema"},
      {R"({"max_tokens": 5, "messages": [{"role": "user", "content": "u"}], "tool_choice": "auto"})", "tool_choice"},
      {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b", "input": []}]}]})", "input"},
      {"not json", "JSON"},
  };
  for (const Case& c : cases) {
    auto r = ParseAnthropicMessagesRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << c.body << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace lineage::server
