// Tool schemas the grammar cannot follow, under a forced tool choice, end to
// end: the real prompt builder, grammar compiler and scheduler behind the
// HTTP server on a random-weight tiny Qwen3.5. Each is the client's error
// (400 naming the path inside the schema), none costs the server a place:
// after 100 of them a valid request succeeds and nothing is in flight.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_stack.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

class BadToolSchemaEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_bad_schema_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    Status st = testing::WriteTinyModel(model::Arch::kQwen3_5, (dir_ / "m.gguf").string(), 3);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::filesystem::path dir_;
};
std::filesystem::path BadToolSchemaEndToEnd::dir_;

// The schema variants, each with the path its error must name.
struct BadSchema {
  json parameters;
  std::string path;
};

std::vector<BadSchema> BadSchemas() {
  auto prop = [](json sub) { return json{{"type", "object"}, {"properties", {{"x", std::move(sub)}}}}; };
  return {
      {prop({{"type", "array"}, {"maxItems", "3"}}), "properties.x.maxItems"},
      {prop({{"type", "array"}, {"minItems", "1"}}), "properties.x.minItems"},
      {prop({{"type", json::array({json::object()})}}), "properties.x.type"},
      {prop({{"type", json::array({json::array()})}}), "properties.x.type"},
      {prop({{"type", "string"}, {"maxLength", -2}}), "properties.x.maxLength"},
      {prop({{"type", "array"}, {"items", {{"type", "array"}, {"maxItems", 1.5}}}}), "properties.x.items.maxItems"},
      {{{"type", "object"}, {"properties", {{"x", {{"type", "string"}}}}}, {"required", "x"}}, "required"},
  };
}

TEST_F(BadToolSchemaEndToEnd, HundredBadSchemasThenAValidRequest) {
  EngineBackendOptions bo;
  bo.engine.num_threads = 2;
  bo.scheduler.max_live = 2;
  bo.scheduler.max_queue = 2;
  bo.cache.ram_budget_bytes = int64_t{1} << 28;
  ServerOptions so;
  so.max_in_flight = 4;  // a leak would show after 4 requests
  auto stack = testing::StartStack((dir_ / "m.gguf").string(), bo, so);
  json messages = json::array({{{"role", "user"}, {"content", "Look at the build file."}}});
  std::vector<BadSchema> bad = BadSchemas();
  for (int i = 0; i < 100; ++i) {
    const BadSchema& b = bad[i % bad.size()];
    std::string path;
    json body;
    switch (i % 4) {
      case 0:  // OpenAI "required"
      case 1:  // OpenAI named function
        path = "/v1/chat/completions";
        body = {{"messages", messages}, {"max_tokens", 4},
                {"tools", json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", b.parameters}}}}})},
                {"tool_choice", i % 4 == 0 ? json("required") : json({{"type", "function"}, {"function", {{"name", "f"}}}})}};
        break;
      default:  // Anthropic {"type":"any"} / {"type":"tool"}
        path = "/v1/messages";
        body = {{"messages", messages}, {"max_tokens", 4},
                {"tools", json::array({{{"name", "f"}, {"input_schema", b.parameters}}})},
                {"tool_choice", i % 4 == 2 ? json({{"type", "any"}}) : json({{"type", "tool"}, {"name", "f"}})}};
    }
    int status = 0;
    json r = testing::PostJson(*stack, path, body, &status);
    ASSERT_EQ(status, 400) << i << ": " << r.dump();
    std::string message = r["error"]["message"].get<std::string>();
    EXPECT_NE(message.find("'" + b.path + "'"), std::string::npos) << i << ": " << message;
  }
  int status = 0;
  json ok = testing::PostJson(*stack, "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 2}}, &status);
  EXPECT_EQ(status, 200) << ok.dump();
  httplib::Client c("127.0.0.1", stack->http->port());
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("lineage_requests_in_flight 0\n"), std::string::npos) << metrics;
}

}  // namespace
}  // namespace lineage::server
