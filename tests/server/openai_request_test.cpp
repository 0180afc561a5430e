#include <gtest/gtest.h>

#include "server/api/openai_request.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

TEST(OpenAiChatRequest, ParsesAFullAgentTurn) {
  json body = {
      {"model", "m"},
      {"messages",
       {{{"role", "developer"}, {"content", "be brief"}},
        {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "list "}}, {{"type", "text"}, {"text", "files"}}}}},
        {{"role", "assistant"},
         {"content", nullptr},
         {"reasoning_content", "need ls"},
         {"tool_calls",
          {{{"id", "call_1"}, {"type", "function"},
            {"function", {{"name", "ls"}, {"arguments", R"({"path": "/tmp", "depth": 2})"}}}}}}},
        {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "a.txt"}}}},
      {"tools",
       {{{"type", "function"},
         {"function", {{"name", "ls"}, {"description", "list"}, {"parameters", {{"type", "object"}}}}}}}},
      {"tool_choice", "auto"},
      {"stop", "END"},
      {"max_tokens", 64},
      {"temperature", 0},
      {"top_p", 0.5},
      {"top_k", 20},
      {"seed", 7},
      {"stream", true},
      {"stream_options", {{"include_usage", true}}}};
  auto r = ParseOpenAiChatRequest(body.dump());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->api, ApiKind::kOpenAiChat);
  ASSERT_EQ(r->messages.size(), 4u);
  EXPECT_EQ(r->messages[0], json({{"role", "system"}, {"content", "be brief"}}));
  EXPECT_EQ(r->messages[1]["content"], "list files");
  // Arguments become a mapping, which is what chat templates iterate.
  json want_call = {{"id", "call_1"}, {"type", "function"},
                    {"function", {{"name", "ls"}, {"arguments", {{"path", "/tmp"}, {"depth", 2}}}}}};
  EXPECT_EQ(r->messages[2]["tool_calls"][0], want_call);
  EXPECT_EQ(r->messages[2]["content"], "");
  EXPECT_EQ(r->messages[2]["reasoning_content"], "need ls");
  EXPECT_EQ(r->messages[3], json({{"role", "tool"}, {"content", "a.txt"}, {"tool_call_id", "call_1"}}));
  ASSERT_EQ(r->tools.size(), 1u);
  EXPECT_EQ(r->tools[0]["function"]["name"], "ls");
  EXPECT_EQ(r->stop, std::vector<std::string>{"END"});
  EXPECT_EQ(r->sampling.max_tokens, 64);
  EXPECT_EQ(r->sampling.temperature, 0.0f);
  EXPECT_EQ(r->sampling.top_p, 0.5f);
  EXPECT_EQ(r->sampling.top_k, 20);
  EXPECT_EQ(r->sampling.seed, 7u);
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_TRUE(r->parse_tool_calls());
}

TEST(OpenAiChatRequest, ToolChoiceForms) {
  auto with = [](json tc) {
    json body = {{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"tool_choice", tc}};
    return ParseOpenAiChatRequest(body.dump());
  };
  EXPECT_EQ(with("none")->tool_choice, ToolChoice::kNone);
  EXPECT_EQ(with("required")->tool_choice, ToolChoice::kRequired);
  auto named = with({{"type", "function"}, {"function", {{"name", "ls"}}}});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(named->tool_choice_name, "ls");
  EXPECT_FALSE(with("sometimes").ok());
  EXPECT_FALSE(with(3).ok());
}

TEST(OpenAiChatRequest, MaxCompletionTokensAndStopList) {
  json body = {{"messages", {{{"role", "user"}, {"content", "x"}}}},
               {"max_completion_tokens", 9},
               {"stop", {"a", "", "bc"}}};
  auto r = ParseOpenAiChatRequest(body.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->sampling.max_tokens, 9);
  EXPECT_EQ(r->stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(r->sampling.max_tokens, 9);
}

struct BadCase {
  const char* body;
  const char* needle;  // a word the message must contain
};

class OpenAiChatBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(OpenAiChatBadInput, IsRejectedWithAClearMessage) {
  auto r = ParseOpenAiChatRequest(GetParam().body);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().code() == StatusCode::kInvalidArgument || r.status().code() == StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find(GetParam().needle), std::string::npos) << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OpenAiChatBadInput,
    ::testing::Values(
        BadCase{"{", "JSON"}, BadCase{"[1,2]", "object"}, BadCase{"{}", "messages"},
        BadCase{R"({"messages": "hi"})", "messages"}, BadCase{R"({"messages": []})", "empty"},
        BadCase{R"({"messages": [{"content": "x"}]})", "role"},
        BadCase{R"({"messages": [{"role": "wizard", "content": "x"}]})", "wizard"},
        BadCase{R"({"messages": [{"role": "user"}]})", "content"},
        BadCase{R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
        BadCase{R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "image_url"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": "10"})", "max_tokens"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": -1})", "max_tokens"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 0})", "max_completion_tokens"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"abc": 1}})", "abc"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"-1": 1}})", "-1"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"99999999999": 1}})", "99999999999"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"391": 1e308}})", "logit_bias.391"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"391": "inf"}})", "logit_bias.391"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"391": null}})", "logit_bias.391"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": [1]})", "logit_bias"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "frequency_penalty": 3})", "frequency_penalty"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "presence_penalty": "a"})", "presence_penalty"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "yaml"}})", "yaml"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema"}})",
                "schema"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "response_format": "json"})", "response_format"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "top_p": 2})", "top_p"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "stop": [1]})", "stop[0]"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "n": 17})", "'n'"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})", "function"},
        BadCase{R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"function": {"parameters": {}}}]})",
                "name"},
        BadCase{R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": 3, "name": "f"}}]}]})",
                "arguments"}));

TEST(OpenAiChatRequest, ReadsLogitAdjustmentsAndReplyFormats) {
  auto r = ParseOpenAiChatRequest(
      R"({"messages": [{"role": "user", "content": "x"}], "logit_bias": {"391": -100, "7": 2.5},
          "frequency_penalty": 0.5, "presence_penalty": -1, "response_format": {"type": "json_object"}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->sampling.logit_bias.size(), 2u);
  EXPECT_EQ(r->sampling.logit_bias[0], (std::pair<int32_t, float>{391, -100.0f}));
  EXPECT_EQ(r->sampling.logit_bias[1], (std::pair<int32_t, float>{7, 2.5f}));
  EXPECT_EQ(r->sampling.frequency_penalty, 0.5f);
  EXPECT_EQ(r->sampling.presence_penalty, -1.0f);
  EXPECT_EQ(r->reply_format, ReplyFormat::kJsonObject);
  auto s = ParseOpenAiChatRequest(
      R"({"messages": [{"role": "user", "content": "x"}],
          "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "object"}}}})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->reply_format, ReplyFormat::kJsonSchema);
  EXPECT_EQ(s->reply_schema, nlohmann::ordered_json({{"type", "object"}}));
  auto c = ParseOpenAiCompletionRequest(R"({"prompt": "p", "response_format": {"type": "json_object"}, "logit_bias": {"1": 3}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->reply_format, ReplyFormat::kJsonObject);
  EXPECT_EQ(c->sampling.logit_bias.size(), 1u);
  EXPECT_FALSE(ParseOpenAiCompletionRequest(R"({"prompt": "p", "max_tokens": 0})").ok());
}

TEST(OpenAiCompletionRequest, ParsesPromptAndDefaults) {
  auto r = ParseOpenAiCompletionRequest(R"({"prompt": "Once upon", "stop": ["\n"], "seed": 1})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->api, ApiKind::kOpenAiCompletion);
  EXPECT_EQ(r->prompt, "Once upon");
  EXPECT_EQ(r->sampling.max_tokens, 16);  // OpenAI's default for this endpoint
  EXPECT_FALSE(r->is_chat());
  EXPECT_TRUE(ParseOpenAiCompletionRequest(R"({"prompt": ["one"]})").ok());
  EXPECT_FALSE(ParseOpenAiCompletionRequest(R"({"prompt": ["a", "b"]})").ok());
  EXPECT_FALSE(ParseOpenAiCompletionRequest(R"({"prompt": 3})").ok());
  EXPECT_FALSE(ParseOpenAiCompletionRequest(R"({})").ok());
}

}  // namespace
}  // namespace lineage::server
