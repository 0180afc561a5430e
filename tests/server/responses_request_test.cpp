// ParseOpenAiResponsesRequest: the Responses API shapes Codex and the OpenAI
// SDKs send, in the chat-template shape.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "server/api/responses_request.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(LINEAGE_SOURCE_DIR) + "/tests/server/fixtures/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ResponsesRequest, StringInputAndInstructions) {
  auto r = ParseOpenAiResponsesRequest(
      R"({"model": "m", "instructions": "Be terse.", "input": "hi", "max_output_tokens": 7,
          "temperature": 0, "stream": true, "store": false})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->api, ApiKind::kOpenAiResponses);
  EXPECT_TRUE(r->is_chat());
  json want = json::array({{{"role", "system"}, {"content", "Be terse."}}, {{"role", "user"}, {"content", "hi"}}});
  EXPECT_EQ(r->messages, want);
  EXPECT_EQ(r->sampling.max_tokens, 7);
  EXPECT_FLOAT_EQ(r->sampling.temperature, 0.0f);
  EXPECT_TRUE(r->stream);
}

TEST(ResponsesRequest, CodexToolLoopBecomesOneAssistantTurnAndAToolResult) {
  auto r = ParseOpenAiResponsesRequest(Fixture("codex_turn2.json"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& m = r->messages;
  ASSERT_EQ(m.size(), 7u) << m.dump(1);
  EXPECT_EQ(m[0]["role"], "system");  // instructions
  EXPECT_EQ(m[1]["role"], "system");  // the developer messages (the builder joins them)
  EXPECT_EQ(m[2]["role"], "system");
  EXPECT_EQ(m[3]["role"], "user");
  EXPECT_EQ(m[4], json({{"role", "user"}, {"content", "How many lines does README.md have?"}}));
  json assistant = {{"role", "assistant"},
                    {"content", "Counting them."},
                    {"reasoning_content", "Count the lines with wc."},
                    {"tool_calls",
                     {{{"id", "call_Xq81"},
                       {"type", "function"},
                       {"function", {{"name", "shell"}, {"arguments", {{"command", {"wc", "-l", "README.md"}}}}}}}}}};
  EXPECT_EQ(m[5], assistant);
  EXPECT_EQ(m[6]["role"], "tool");
  EXPECT_EQ(m[6]["tool_call_id"], "call_Xq81");
  // Function tools in OpenAI function form; the namespace and the hosted
  // web_search are skipped.
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[0]["function"]["name"], "shell");
  EXPECT_EQ(r->tool_choice, ToolChoice::kAuto);
  EXPECT_FALSE(r->parallel_tool_calls);
  EXPECT_TRUE(r->stream);
}

TEST(ResponsesRequest, FunctionCallsWithoutAMessageOpenAnAssistantTurn) {
  auto r = ParseOpenAiResponsesRequest(R"({"input": [
      {"role": "user", "content": "go"},
      {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}]},
      {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
      {"type": "function_call", "call_id": "c2", "name": "pwd", "arguments": ""},
      {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "a"}]},
      {"type": "function_call_output", "call_id": "c2", "output": "/"}],
      "tool_choice": {"type": "function", "name": "ls"}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& m = r->messages;
  ASSERT_EQ(m.size(), 4u) << m.dump(1);
  EXPECT_EQ(m[1]["reasoning_content"], "plan");
  EXPECT_EQ(m[1]["tool_calls"].size(), 2u);
  EXPECT_EQ(m[2], json({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "a"}}));
  EXPECT_EQ(r->tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(r->tool_choice_name, "ls");
}

TEST(ResponsesRequest, ReasoningEffortNoneTurnsThinkingOff) {
  auto r = ParseOpenAiResponsesRequest(R"({"input": "hi", "reasoning": {"effort": "none"}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->template_kwargs["enable_thinking"], false);
}

TEST(ResponsesRequest, ReadsTheTextFormat) {
  auto r = ParseOpenAiResponsesRequest(
      R"({"input": "hi", "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "array"}}}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->reply_format, ReplyFormat::kJsonSchema);
  EXPECT_EQ(r->reply_schema, nlohmann::ordered_json({{"type", "array"}}));
  auto o = ParseOpenAiResponsesRequest(R"({"input": "hi", "text": {"format": {"type": "json_object"}}})");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->reply_format, ReplyFormat::kJsonObject);
}

TEST(ResponsesRequest, BadAndUnsupportedInputGetsAClearError) {
  struct Case {
    const char* body;
    const char* needle;
    StatusCode code;
  } cases[] = {
      {R"({"model": "m"})", "'input'", StatusCode::kInvalidArgument},
      {R"({"input": []})", "'input' must not be empty", StatusCode::kInvalidArgument},
      {R"({"input": "hi", "previous_response_id": "resp_1"})", "keeps no responses", StatusCode::kInvalidArgument},
      {R"({"input": [{"type": "item_reference", "id": "msg_1"}]})", "item references", StatusCode::kInvalidArgument},
      {R"({"input": [{"role": "wizard", "content": "x"}]})", "wizard", StatusCode::kInvalidArgument},
      {R"({"input": [{"type": "telepathy"}]})", "telepathy", StatusCode::kInvalidArgument},
      {R"({"input": [{"type": "function_call", "name": "x"}]})", "call_id", StatusCode::kInvalidArgument},
      {R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]})", "input_image",
       StatusCode::kUnsupported},
      {R"({"input": "hi", "text": {"format": {"type": "json_schema"}}})", "text.format.schema", StatusCode::kInvalidArgument},
      {R"({"input": "hi", "text": {"format": {"type": "xml"}}})", "xml", StatusCode::kInvalidArgument},
      {R"({"input": "hi", "background": true})", "background", StatusCode::kUnsupported},
      {R"({"input": "hi", "max_output_tokens": 0})", "max_output_tokens", StatusCode::kInvalidArgument},
      {R"({"input": "hi", "tools": [{"type": "function"}]})", "name", StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    auto r = ParseOpenAiResponsesRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), c.code) << c.body << " -> " << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << c.body << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace lineage::server
