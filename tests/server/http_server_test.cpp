#include <gtest/gtest.h>

#include <thread>

#include "fake_backend.h"
#include "http_test_util.h"
#include "server/http_server.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::FakeBackend;
using testing::ParseSse;
using testing::Script;

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions o = {}) {
    o.port = 0;
    o.log_requests = false;
    server_ = std::make_unique<HttpServer>(&backend_, o);
    ASSERT_TRUE(server_->Start().ok());
  }
  void SetUp() override {}
  void TearDown() override {
    if (server_) server_->Stop();
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(20, 0);
    return c;
  }
  httplib::Result Post(const std::string& path, const json& body, httplib::Headers h = {}) {
    return Client().Post(path.c_str(), h, body.dump(), "application/json");
  }

  static json Chat(bool stream = false) {
    json b = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    if (stream) b["stream"] = true;
    return b;
  }
  static json Messages(bool stream = false) {
    json b = {{"model", "m"}, {"max_tokens", 10}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    if (stream) b["stream"] = true;
    return b;
  }

  FakeBackend backend_;
  std::unique_ptr<HttpServer> server_;
};

const std::string kXmlCall =
    "<tool_call>\n<function=read>\n<parameter=path>\n/a\n</parameter>\n</function>\n</tool_call>";

json ReadTool() {
  return {{"type", "function"},
          {"function", {{"name", "read"}, {"parameters", {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}}}}};
}

TEST_F(HttpServerTest, OpenAiNonStreamingChat) {
  StartServer();
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello, world");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 10);
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["usage"]["total_tokens"], 13);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  ASSERT_EQ(backend_.requests().size(), 1u);
  EXPECT_EQ(backend_.requests()[0].messages[0]["content"], "hi");
}

TEST_F(HttpServerTest, OpenAiStreamingWithUsage) {
  StartServer();
  json body = Chat(true);
  body["stream_options"] = {{"include_usage", true}};
  auto res = Post("/v1/chat/completions", body);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type").rfind("text/event-stream", 0), 0u);
  auto msgs = ParseSse(res->body);
  ASSERT_GE(msgs.size(), 4u);
  EXPECT_EQ(msgs.back().data, "[DONE]");
  std::string content;
  std::string finish;
  json usage;
  for (size_t i = 0; i + 1 < msgs.size(); ++i) {
    json c = json::parse(msgs[i].data);
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    ASSERT_TRUE(c.contains("usage"));  // null on every chunk but the last, when include_usage
    if (i == 0) {
      EXPECT_EQ(c["choices"][0]["delta"]["role"], "assistant");
    }
    if (c["choices"].empty()) {
      usage = c["usage"];
      continue;
    }
    EXPECT_TRUE(c["usage"].is_null());
    content += c["choices"][0]["delta"].value("content", "");
    if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(content, "Hello, world");
  EXPECT_EQ(finish, "stop");
  EXPECT_EQ(usage["prompt_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(usage["completion_tokens"], 3);
}

TEST_F(HttpServerTest, OpenAiStreamedToolCallAndReasoning) {
  // The call arrives split at awkward places, as tokens do.
  backend_.Queue(Script({"plan", "ning\n</th", "ink>\n\nOK.\n\n<tool", "_call>\n<function=re",
                         kXmlCall.substr(std::string("<tool_call>\n<function=re").size())})
                     .Reasoning());
  StartServer();
  json body = Chat(true);
  body["tools"] = json::array({ReadTool()});
  auto res = Post("/v1/chat/completions", body);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  std::string reasoning, content, finish;
  json calls = json::array();
  for (auto& m : ParseSse(res->body)) {
    if (m.data == "[DONE]") continue;
    json d = json::parse(m.data)["choices"][0];
    reasoning += d["delta"].value("reasoning_content", "");
    content += d["delta"].value("content", "");
    if (d["delta"].contains("tool_calls")) calls.push_back(d["delta"]["tool_calls"][0]);
    if (!d["finish_reason"].is_null()) finish = d["finish_reason"];
  }
  EXPECT_EQ(reasoning, "planning");
  EXPECT_EQ(content, "OK.");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[0]["type"], "function");
  EXPECT_EQ(calls[0]["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(calls[0]["function"]["name"], "read");
  EXPECT_EQ(json::parse(calls[0]["function"]["arguments"].get<std::string>()), json({{"path", "/a"}}));
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(HttpServerTest, OpenAiNonStreamingToolCall) {
  backend_.Queue(Script({"Sure.\n\n", kXmlCall}));
  StartServer();
  json body = Chat();
  body["tools"] = json::array({ReadTool()});
  auto res = Post("/v1/chat/completions", body);
  ASSERT_TRUE(res);
  json msg = json::parse(res->body)["choices"][0];
  EXPECT_EQ(msg["finish_reason"], "tool_calls");
  EXPECT_EQ(msg["message"]["content"], "Sure.");
  EXPECT_EQ(msg["message"]["tool_calls"][0]["function"]["name"], "read");
}

// usage counts the tokens generated inside the reasoning block, as OpenAI's
// completion_tokens_details.reasoning_tokens does (the token that closes
// the block counts as reasoning).
// The root answers GET and HEAD (Claude Code probes HEAD / at start-up).
TEST_F(HttpServerTest, RootAnswersGetAndHead) {
  StartServer();
  httplib::Client c("127.0.0.1", server_->port());
  auto head = c.Head("/");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  auto get = c.Get("/");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(json::parse(get->body)["name"], "lineage");
}

TEST_F(HttpServerTest, OpenAiUsageCountsReasoningTokens) {
  backend_.Queue(Script({"plan", "ning\n</think>\n\nOK", "."}).Reasoning());
  StartServer();
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json j = json::parse(res->body);
  EXPECT_EQ(j["choices"][0]["message"]["content"], "OK.");
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 2);
}

TEST_F(HttpServerTest, AnthropicStreamingEventSequence) {
  backend_.Queue(Script({"hmm</think>", "Text ", "here.", kXmlCall}).Reasoning().Tokens(12, 8));
  StartServer();
  json body = Messages(true);
  body["tools"] = {{{"name", "read"}, {"input_schema", {{"type", "object"}}}}};
  auto res = Post("/v1/messages", body);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  std::vector<std::string> types;
  std::string thinking, text;
  json tool_block, message_delta, start;
  for (auto& m : ParseSse(res->body)) {
    json d = json::parse(m.data);
    EXPECT_EQ(d["type"], m.event);  // the event line names the data's type
    // Pieces that arrive together make one delta; compare the shape only.
    if (types.empty() || m.event != "content_block_delta" || types.back() != m.event) types.push_back(m.event);
    if (m.event == "message_start") start = d;
    if (m.event == "content_block_start" && d["content_block"]["type"] == "tool_use") tool_block = d;
    if (m.event == "content_block_delta") {
      if (d["delta"]["type"] == "thinking_delta") thinking += d["delta"]["thinking"].get<std::string>();
      if (d["delta"]["type"] == "text_delta") text += d["delta"]["text"].get<std::string>();
      if (d["delta"]["type"] == "input_json_delta") {
        EXPECT_EQ(json::parse(d["delta"]["partial_json"].get<std::string>()), json({{"path", "/a"}}));
      }
    }
    if (m.event == "message_delta") message_delta = d;
  }
  std::vector<std::string> want = {"message_start",       "ping",
                                   "content_block_start", "content_block_delta", "content_block_stop",
                                   "content_block_start", "content_block_delta",
                                   "content_block_stop",  "content_block_start", "content_block_delta",
                                   "content_block_stop",  "message_delta",       "message_stop"};
  EXPECT_EQ(types, want);
  EXPECT_EQ(thinking, "hmm");
  EXPECT_EQ(text, "Text here.");
  EXPECT_EQ(start["message"]["role"], "assistant");
  EXPECT_EQ(start["message"]["usage"]["input_tokens"], 4);  // 12 prompt tokens, 8 from the cache
  EXPECT_EQ(start["message"]["usage"]["cache_read_input_tokens"], 8);
  EXPECT_EQ(tool_block["index"], 2);
  EXPECT_EQ(tool_block["content_block"]["name"], "read");
  EXPECT_EQ(tool_block["content_block"]["id"].get<std::string>().rfind("toolu_", 0), 0u);
  EXPECT_EQ(message_delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(message_delta["usage"]["output_tokens"], 4);
}

TEST_F(HttpServerTest, AnthropicNonStreamingWithStopSequence) {
  backend_.Queue(Script({"one ", "two ##", "# three"}));
  StartServer();
  json body = Messages();
  body["stop_sequences"] = {"###"};
  auto res = Post("/v1/messages", body);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json j = json::parse(res->body);
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["content"], json::parse(R"([{"type": "text", "text": "one two"}])"));
  EXPECT_EQ(j["stop_reason"], "stop_sequence");
  EXPECT_EQ(j["stop_sequence"], "###");
  EXPECT_EQ(j["usage"]["cache_read_input_tokens"], 4);
  EXPECT_EQ(j["usage"]["input_tokens"], 6);
}

TEST_F(HttpServerTest, CompletionsEndpoint) {
  backend_.Queue(Script({" upon", " a time"}, FinishReason::kLength));
  StartServer();
  auto res = Post("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 2}});
  ASSERT_TRUE(res);
  json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], " upon a time");  // leading space kept: no chat parsing here
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(backend_.requests()[0].prompt, "Once");
}

TEST_F(HttpServerTest, InvalidUtf8BecomesReplacementCharacters) {
  backend_.Queue(Script({"a\xF0\x9F", "\x98\x80", "b\xFF", "\xE2\x82"}));
  StartServer();
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["choices"][0]["message"]["content"], "a\xF0\x9F\x98\x80" "b\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(HttpServerTest, BadInputGetsTheApiErrorShapeAndTheServerGoesOn) {
  StartServer();
  auto res = Client().Post("/v1/chat/completions", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json e = json::parse(res->body);
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_FALSE(e["error"]["message"].get<std::string>().empty());

  res = Post("/v1/messages", {{"max_tokens", 5}, {"messages", {{{"role", "robot"}, {"content", "x"}}}}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  e = json::parse(res->body);
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("robot"), std::string::npos);

  res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(HttpServerTest, BackendRefusalsMapToStatusCodes) {
  Script too_long;
  too_long.submit_error = OutOfRange("prompt of 9000 tokens exceeds the context of 4096");
  Script full;
  full.submit_error = ResourceExhausted("queue full");
  backend_.Queue(too_long);
  backend_.Queue(full);
  StartServer();
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("exceeds the context"), std::string::npos);
  res = Post("/v1/messages", Messages());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "overloaded_error");
}

TEST_F(HttpServerTest, ApiKeyIsRequiredEverywhereButHealth) {
  ServerOptions o;
  o.api_key = "sekrit";
  StartServer(o);
  auto c = Client();
  EXPECT_EQ(c.Get("/health")->status, 200);
  EXPECT_EQ(c.Get("/v1/models")->status, 401);
  EXPECT_EQ(c.Get("/v1/models")->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(c.Get("/metrics")->status, 401);
  EXPECT_EQ(c.Get("/v1/models", {{"Authorization", "Bearer wrong"}})->status, 401);
  EXPECT_EQ(c.Get("/v1/models", {{"Authorization", "Bearer sekrit"}})->status, 200);
  EXPECT_EQ(c.Get("/v1/models", {{"x-api-key", "sekrit"}})->status, 200);
  auto res = Post("/v1/messages", Messages());
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "authentication_error");
  EXPECT_EQ(Post("/v1/messages", Messages(), {{"x-api-key", "sekrit"}})->status, 200);
}

TEST_F(HttpServerTest, OversizedBodyIs413) {
  ServerOptions o;
  o.max_body_bytes = 1000;
  StartServer(o);
  json body = Chat();
  body["messages"][0]["content"] = std::string(5000, 'x');
  auto res = Post("/v1/chat/completions", body);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(Post("/v1/chat/completions", Chat())->status, 200);
}

TEST_F(HttpServerTest, OverloadGets503WithRetryAfterAndHealthSaysBusy) {
  Script slow({"a", "b", "c", "d"});
  slow.delay = std::chrono::milliseconds(150);
  backend_.Queue(slow);
  ServerOptions o;
  o.max_in_flight = 1;
  StartServer(o);
  std::thread first([&] { EXPECT_EQ(Post("/v1/chat/completions", Chat())->status, 200); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto res = Post("/v1/chat/completions", Chat());
  // /health tells a server that cannot admit work from one that can.
  auto busy = Client().Get("/health");
  first.join();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(json::parse(busy->body)["status"], "busy");
  auto ok = Client().Get("/health");
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(json::parse(ok->body)["status"], "ok");
  EXPECT_EQ(Post("/v1/chat/completions", Chat())->status, 200);  // capacity is back
}

TEST_F(HttpServerTest, ClientDisconnectCancelsTheGeneration) {
  Script slow;
  for (int i = 0; i < 100; ++i) slow.pieces.push_back("tok ");
  slow.delay = std::chrono::milliseconds(20);
  StartServer();
  auto c = Client();
  int chunks = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = Chat(true).dump();
  req.set_header("Content-Type", "application/json");
  backend_.Queue(slow);
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 3; };
  c.send(req);
  for (int i = 0; i < 100 && backend_.cancelled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(backend_.cancelled(), 1);
}

TEST_F(HttpServerTest, LongPrefillReportsProgressInTheStream) {
  Script s({"done"});
  s.Tokens(5000, 0);
  s.prefill_step = 1000;
  s.prefill_step_delay = std::chrono::milliseconds(400);
  backend_.Queue(s);
  StartServer();
  auto res = Post("/v1/chat/completions", Chat(true));
  ASSERT_TRUE(res);
  // Which step is reported depends on timing; the form does not.
  size_t at = res->body.find(": prefill ");
  ASSERT_NE(at, std::string::npos) << res->body;
  int64_t n = std::stoll(res->body.substr(at + 10));
  EXPECT_TRUE(n % 1000 == 0 && n >= 1000 && n < 5000) << n;
  EXPECT_EQ(res->body.substr(res->body.find('/', at), 14), "/5000 tokens\n\n");
  EXPECT_EQ(res->body.find(": prefill 5000"), std::string::npos);
  // Comments are not events: the chunks still parse and say "done".
  std::string content;
  for (auto& m : ParseSse(res->body))
    if (m.data != "[DONE]") content += json::parse(m.data)["choices"][0]["delta"].value("content", "");
  EXPECT_EQ(content, "done");
}

TEST_F(HttpServerTest, BackendErrorMidStreamIsAnSseError) {
  backend_.Queue(Script({"partial"}, FinishReason::kError));
  StartServer();
  auto res = Post("/v1/messages", Messages(true));
  ASSERT_TRUE(res);
  auto msgs = ParseSse(res->body);
  ASSERT_FALSE(msgs.empty());
  EXPECT_EQ(msgs.back().event, "error");
  EXPECT_EQ(json::parse(msgs.back().data)["error"]["type"], "api_error");
}

TEST_F(HttpServerTest, ModelsMetricsAndCacheStats) {
  StartServer();
  ASSERT_EQ(Post("/v1/chat/completions", Chat())->status, 200);
  auto c = Client();
  json models = json::parse(c.Get("/v1/models")->body);
  EXPECT_EQ(models["object"], "list");
  EXPECT_EQ(models["data"][0]["id"], "fake-model");
  std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("lineage_requests_total{endpoint=\"/v1/chat/completions\",code=\"200\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("lineage_cached_tokens_total 4\n"), std::string::npos);
  EXPECT_NE(metrics.find("lineage_restores_total{kind=\"entry\",tier=\"ram\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("lineage_cache_bytes{tier=\"ram\"} 12345\n"), std::string::npos);
  EXPECT_NE(metrics.find("lineage_time_to_first_token_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("lineage_time_to_first_token_seconds_count 1\n"), std::string::npos);
  json stats = json::parse(c.Get("/v1/cache/stats")->body);
  EXPECT_EQ(stats["entries"], 3);
  EXPECT_EQ(stats["evictions"]["ram"], 2);
  EXPECT_EQ(stats["requests"]["cached_tokens"], 4);
  EXPECT_EQ(c.Get("/nope")->status, 404);
}

}  // namespace
}  // namespace lineage::server
