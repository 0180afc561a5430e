// POST /v1/responses over real HTTP with a scripted backend: the documented
// event sequence, the response object, usage with cached tokens, errors.
#include <gtest/gtest.h>

#include "fake_backend.h"
#include "http_test_util.h"
#include "server/http_server.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::FakeBackend;
using testing::ParseSse;
using testing::Script;

const std::string kXmlCall =
    "<tool_call>\n<function=read>\n<parameter=path>\n/a\n</parameter>\n</function>\n</tool_call>";

class ResponsesHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.port = 0;
    o.log_requests = false;
    server_ = std::make_unique<HttpServer>(&backend_, o);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override { server_->Stop(); }
  httplib::Result Post(const json& body) {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(20, 0);
    return c.Post("/v1/responses", body.dump(), "application/json");
  }
  static json Body(bool stream) {
    return {{"model", "m"},
            {"input", "read /a"},
            {"stream", stream},
            {"tools", {{{"type", "function"}, {"name", "read"},
                        {"parameters", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}}}};
  }

  FakeBackend backend_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(ResponsesHttpTest, StreamingFollowsTheDocumentedEventSequence) {
  backend_.Queue(Script({"plan", "ning\n</think>\n\nOK", ".\n\n", kXmlCall}).Reasoning().Tokens(40, 32));
  auto res = Post(Body(true));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_NE(res->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  std::vector<std::string> types;
  std::string reasoning, text, arguments;
  json completed;
  int64_t sequence = 0;
  for (auto& m : ParseSse(res->body)) {
    json e = json::parse(m.data);
    EXPECT_EQ(m.event, e["type"]);
    EXPECT_EQ(e["sequence_number"], sequence++);
    std::string type = e["type"];
    if (types.empty() || types.back() != type) types.push_back(type);
    if (type == "response.reasoning_text.delta") reasoning += e["delta"].get<std::string>();
    if (type == "response.output_text.delta") text += e["delta"].get<std::string>();
    if (type == "response.function_call_arguments.delta") arguments += e["delta"].get<std::string>();
    if (type == "response.completed") completed = e["response"];
  }
  std::vector<std::string> want = {
      "response.created", "response.in_progress",
      "response.output_item.added", "response.reasoning_text.delta", "response.reasoning_text.done",
      "response.output_item.done",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done",
      "response.completed"};
  EXPECT_EQ(types, want);
  EXPECT_EQ(reasoning, "planning");
  EXPECT_EQ(text, "OK.");
  EXPECT_EQ(json::parse(arguments), json({{"path", "/a"}}));
  ASSERT_TRUE(completed.is_object());
  EXPECT_EQ(completed["status"], "completed");
  EXPECT_EQ(completed["object"], "response");
  EXPECT_EQ(completed["store"], false);
  ASSERT_EQ(completed["output"].size(), 3u);
  EXPECT_EQ(completed["output"][0]["type"], "reasoning");
  EXPECT_EQ(completed["output"][1]["content"][0]["text"], "OK.");
  EXPECT_EQ(completed["output"][2]["type"], "function_call");
  EXPECT_EQ(completed["output"][2]["name"], "read");
  EXPECT_EQ(completed["output"][2]["call_id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(completed["usage"]["input_tokens"], 40);
  EXPECT_EQ(completed["usage"]["input_tokens_details"]["cached_tokens"], 32);
  EXPECT_EQ(completed["usage"]["output_tokens"], 4);
  EXPECT_EQ(completed["usage"]["output_tokens_details"]["reasoning_tokens"], 2);  // "plan", "ning\n</think>..."
  EXPECT_EQ(completed["usage"]["total_tokens"], 44);
}

TEST_F(ResponsesHttpTest, NonStreamingResponseObject) {
  backend_.Queue(Script({"Hello", " there"}).Tokens(12, 8));
  auto res = Post(Body(false));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json r = json::parse(res->body);
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["id"].get<std::string>().rfind("resp_", 0), 0u);
  EXPECT_EQ(r["status"], "completed");
  ASSERT_EQ(r["output"].size(), 1u);
  EXPECT_EQ(r["output"][0]["type"], "message");
  EXPECT_EQ(r["output"][0]["role"], "assistant");
  EXPECT_EQ(r["output"][0]["content"][0]["type"], "output_text");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Hello there");
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 8);
  ASSERT_EQ(backend_.requests().size(), 1u);
  EXPECT_EQ(backend_.requests()[0].api, ApiKind::kOpenAiResponses);
}

TEST_F(ResponsesHttpTest, ACutReplyIsIncomplete) {
  backend_.Queue(Script({"Hel", "lo"}, FinishReason::kLength));
  auto res = Post(Body(true));
  ASSERT_TRUE(res);
  auto events = ParseSse(res->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event, "response.incomplete");
  json r = json::parse(events.back().data)["response"];
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Hello");
}

TEST_F(ResponsesHttpTest, PreviousResponseIdIsAClearOpenAiError) {
  json body = Body(false);
  body["previous_response_id"] = "resp_123";
  auto res = Post(body);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json e = json::parse(res->body);
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("keeps no responses"), std::string::npos) << res->body;
}

}  // namespace
}  // namespace lineage::server
