// tool_choice enforced end to end: the real engine, tokenizer, chat template
// and scheduler behind the HTTP server, on random-weight tiny Qwen3.5 (XML
// calls) and Qwen3 (JSON calls) models, which never call a tool by
// themselves. "required" / "any" and named choices must come back as calls
// of the right tools with arguments that parse and hold the required keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "e2e_stack.h"
#include "http_test_util.h"
#include "tools/chat_templates.h"
#include "model/load_model.h"
#include "model/shapes.h"
#include "tools/write_model.h"
#include "server/generation/engine_backend.h"
#include "server/http_server.h"
#include "tools/synthetic_vocab.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

using testing::Stack;

// Tools with short strings: a random model closes a string only at its limit.
json Tools() {
  json tools = testing::ToolChoiceTools();
  tools[0]["function"]["parameters"]["properties"]["path"]["maxLength"] = 12;
  tools[1]["function"]["parameters"]["properties"].erase("anything");
  tools[1]["function"]["parameters"]["properties"]["tags"]["items"]["maxLength"] = 6;
  return tools;
}

json AnthropicTools() {
  json out = json::array();
  for (const json& t : Tools())
    out.push_back({{"name", t["function"]["name"]}, {"input_schema", t["function"]["parameters"]}});
  return out;
}

class ToolChoiceEndToEnd : public ::testing::TestWithParam<model::Arch> {
 protected:
  static void SetUpTestSuite() { models_ = std::make_unique<testing::TinyQwenPair>("tool_choice", 3); }
  static void TearDownTestSuite() { models_.reset(); }
  static std::string Path(model::Arch arch) { return models_->Path(arch); }

  std::unique_ptr<Stack> Start() {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.max_live = 4;
    bo.cache.ram_budget_bytes = int64_t{1} << 28;
    return testing::StartStack(Path(GetParam()), bo);
  }

  static json Post(Stack& s, const std::string& path, const json& body, int* status = nullptr) {
    return testing::PostJson(s, path, body, status, 120);
  }

  static json Messages() { return json::array({{{"role", "user"}, {"content", "Look at the build file, please."}}}); }

  static json OpenAi(const json& tool_choice, int max_tokens, uint64_t seed) {
    return {{"messages", Messages()}, {"tools", Tools()}, {"tool_choice", tool_choice},
            {"max_tokens", max_tokens}, {"temperature", 1.0}, {"seed", seed}};
  }

  static void ExpectArguments(const std::string& name, const json& args) {
    const json tools = Tools();
    const json* schema = testing::ToolSchema(tools, name);
    ASSERT_NE(schema, nullptr) << name;
    std::string why;
    EXPECT_TRUE(testing::SatisfiesSchema(*schema, args, &why)) << why << ": " << args.dump();
    for (const json& key : (*schema)["required"]) EXPECT_TRUE(args.contains(key.get<std::string>())) << args.dump();
  }

  static inline std::unique_ptr<testing::TinyQwenPair> models_;
};

TEST_P(ToolChoiceEndToEnd, OpenAiRequiredAndNamed) {
  auto s = Start();
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    json r = Post(*s, "/v1/chat/completions", OpenAi("required", 2000, seed));
    const json& choice = r["choices"][0];
    ASSERT_EQ(choice["finish_reason"], "tool_calls") << r.dump();
    const json& calls = choice["message"]["tool_calls"];
    ASSERT_GE(calls.size(), 1u);
    for (const json& c : calls) {
      std::string name = c["function"]["name"];
      EXPECT_TRUE(name == "read_file" || name == "set_mode") << name;
      ExpectArguments(name, json::parse(c["function"]["arguments"].get<std::string>()));
    }
  }
  json named = {{"type", "function"}, {"function", {{"name", "set_mode"}}}};
  json body = OpenAi(named, 2000, 7);
  body["temperature"] = 0;  // greedy decoding is constrained too
  json r = Post(*s, "/v1/chat/completions", body);
  ASSERT_EQ(r["choices"][0]["finish_reason"], "tool_calls") << r.dump();
  const json& calls = r["choices"][0]["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["function"]["name"], "set_mode");
  ExpectArguments("set_mode", json::parse(calls[0]["function"]["arguments"].get<std::string>()));
  // One call only when parallel calls are off.
  body = OpenAi("required", 2000, 11);
  body["parallel_tool_calls"] = false;
  r = Post(*s, "/v1/chat/completions", body);
  EXPECT_EQ(r["choices"][0]["message"]["tool_calls"].size(), 1u) << r.dump();
}

TEST_P(ToolChoiceEndToEnd, OpenAiStreamingNamed) {
  auto s = Start();
  json body = OpenAi({{"type", "function"}, {"function", {{"name", "read_file"}}}}, 2000, 5);
  body["stream"] = true;
  httplib::Client c("127.0.0.1", s->http->port());
  c.set_read_timeout(120, 0);
  auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  std::string name, arguments, finish;
  for (const auto& m : testing::ParseSse(res->body)) {
    if (m.data == "[DONE]") continue;
    json chunk = json::parse(m.data);
    if (chunk["choices"].empty()) continue;
    const json& choice = chunk["choices"][0];
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
    for (const json& tc : choice["delta"].value("tool_calls", json::array())) {
      if (tc["function"].contains("name")) name += tc["function"]["name"].get<std::string>();
      if (tc["function"].contains("arguments")) arguments += tc["function"]["arguments"].get<std::string>();
    }
  }
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(name, "read_file");
  ExpectArguments("read_file", json::parse(arguments));
}

TEST_P(ToolChoiceEndToEnd, AnthropicAnyAndTool) {
  auto s = Start();
  for (const json& choice : {json{{"type", "any"}}, json{{"type", "tool"}, {"name", "read_file"}}}) {
    json body = {{"model", "m"}, {"max_tokens", 2000}, {"messages", Messages()}, {"tools", AnthropicTools()},
                 {"tool_choice", choice}, {"temperature", 1.0}, {"seed", 11}};
    json r = Post(*s, "/v1/messages", body);
    ASSERT_EQ(r["stop_reason"], "tool_use") << r.dump();
    int uses = 0;
    for (const json& block : r["content"]) {
      if (block["type"] == "thinking") continue;
      ASSERT_EQ(block["type"], "tool_use") << r.dump();
      ++uses;
      std::string name = block["name"];
      if (choice["type"] == "tool") {
        EXPECT_EQ(name, "read_file");
      }
      ExpectArguments(name, block["input"]);
    }
    EXPECT_GE(uses, 1);
    if (choice["type"] == "tool") {
      EXPECT_EQ(uses, 1);
    }
  }
}

TEST_P(ToolChoiceEndToEnd, TooFewTokensEndsWithLengthAndTheServerGoesOn) {
  auto s = Start();
  for (int max_tokens : {1, 3, 6}) {
    json r = Post(*s, "/v1/chat/completions", OpenAi("required", max_tokens, 2));
    EXPECT_EQ(r["choices"][0]["finish_reason"], "length") << r.dump();
    EXPECT_EQ(r["usage"]["completion_tokens"], max_tokens);
  }
  int status = 0;
  json bad = OpenAi({{"type", "function"}, {"function", {{"name", "no_such_tool"}}}}, 10, 1);
  json r = Post(*s, "/v1/chat/completions", bad, &status);
  EXPECT_EQ(status, 400) << r.dump();
  r = Post(*s, "/v1/chat/completions", OpenAi("required", 2000, 4));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls") << r.dump();
}

// Constrained and free requests decode in the same batched steps.
TEST_P(ToolChoiceEndToEnd, ConstrainedAndFreeRequestsTogether) {
  auto s = Start();
  std::vector<json> replies(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      json body = OpenAi(i % 2 == 0 ? json("required") : json("auto"), i % 2 == 0 ? 2000 : 48, 20 + i);
      replies[i] = Post(*s, "/v1/chat/completions", body);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    const json& choice = replies[i]["choices"][0];
    if (i % 2 == 0) {
      EXPECT_EQ(choice["finish_reason"], "tool_calls") << replies[i].dump();
    } else {
      EXPECT_NE(choice["finish_reason"], "tool_calls") << replies[i].dump();  // a random model calls nothing freely
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ToolChoiceEndToEnd, ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3),
                         [](const auto& info) { return info.param == model::Arch::kQwen3_5 ? "Qwen35Xml" : "Qwen3Json"; });

}  // namespace
}  // namespace lineage::server
