// The OpenAI sampling parameters that change a reply, end to end on the real
// engine behind the HTTP server (random-weight tiny models): logit_bias,
// frequency and presence penalties, and response_format's JSON replies. Each
// either does what it says or is refused with a 400 naming it.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_stack.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class SamplingParamsEndToEnd : public ::testing::TestWithParam<model::Arch> {
 protected:
  static void SetUpTestSuite() { models_ = std::make_unique<testing::TinyQwenPair>("sampling_params", 5); }
  static void TearDownTestSuite() { models_.reset(); }
  static std::string Path(model::Arch arch) { return models_->Path(arch); }
  std::unique_ptr<Stack> Start() {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.cache.ram_budget_bytes = int64_t{1} << 27;
    return testing::StartStack(Path(GetParam()), bo);
  }
  static json Completion(json extra) {
    json body = {{"prompt", "The build failed because"}, {"max_tokens", 8}, {"temperature", 0}};
    for (auto& [k, v] : extra.items()) body[k] = v;
    return body;
  }
  static std::string Text(const json& r) { return r["choices"][0]["text"]; }
  static inline std::unique_ptr<testing::TinyQwenPair> models_;
};

TEST_P(SamplingParamsEndToEnd, LogitBiasAndPenaltiesChangeTheReply) {
  auto s = Start();
  const std::string plain = Text(testing::PostJson(*s, "/v1/completions", Completion({})));
  // +100 on one token: greedy picks it every time.
  const std::string forced = Text(testing::PostJson(*s, "/v1/completions", Completion({{"logit_bias", {{"300", 100}}}})));
  ASSERT_FALSE(forced.empty());
  ASSERT_EQ(forced.size() % 8, 0u) << forced;
  std::string eight;
  for (int i = 0; i < 8; ++i) eight += forced.substr(0, forced.size() / 8);
  EXPECT_EQ(forced, eight);
  EXPECT_NE(forced, plain);
  // A bias of 0 changes nothing.
  EXPECT_EQ(Text(testing::PostJson(*s, "/v1/completions", Completion({{"logit_bias", {{"300", 0}}}}))), plain);
  // A random model's greedy reply repeats itself; the largest penalties
  // forbid the repeats it makes.
  const std::string repeated = Text(testing::PostJson(*s, "/v1/completions", Completion({{"max_tokens", 24}})));
  const std::string penalised = Text(testing::PostJson(
      *s, "/v1/completions", Completion({{"max_tokens", 24}, {"frequency_penalty", 2}, {"presence_penalty", 2}})));
  EXPECT_NE(penalised, repeated);
  // Bad values are 400s naming the field, and the server goes on.
  int status = 0;
  json r = testing::PostJson(*s, "/v1/completions", Completion({{"logit_bias", {{"99999999", 1}}}}), &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(r.dump().find("logit_bias"), std::string::npos) << r.dump();
  r = testing::PostJson(*s, "/v1/chat/completions",
                        {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 0}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(r.dump().find("max_tokens"), std::string::npos) << r.dump();
  EXPECT_EQ(Text(testing::PostJson(*s, "/v1/completions", Completion({}))), plain);
}

const json kSchema = json::parse(R"({"type": "object", "properties": {
    "mode": {"enum": ["fast", "slow"]}, "n": {"type": "integer"}, "ok": {"type": "boolean"},
    "note": {"type": "string", "maxLength": 8}}, "required": ["mode", "n", "ok"]})");

TEST_P(SamplingParamsEndToEnd, JsonSchemaRepliesParseAndFollowTheSchema) {
  auto s = Start();
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    json format = {{"type", "json_schema"}, {"json_schema", {{"name", "status"}, {"schema", kSchema}}}};
    json chat = {{"messages", {{{"role", "user"}, {"content", "Report the build status."}}}},
                 {"response_format", format}, {"max_tokens", 400}, {"temperature", 1.0}, {"seed", seed}};
    json r = testing::PostJson(*s, "/v1/chat/completions", chat);
    ASSERT_EQ(r["choices"][0]["finish_reason"], "stop") << r.dump();
    json value = json::parse(r["choices"][0]["message"]["content"].get<std::string>(), nullptr, false);
    ASSERT_FALSE(value.is_discarded()) << r.dump();
    std::string why;
    EXPECT_TRUE(testing::SatisfiesSchema(kSchema, value, &why)) << why << ": " << value.dump();

    json completion = Completion({{"response_format", format}, {"max_tokens", 400}, {"temperature", 1.0}, {"seed", seed}});
    r = testing::PostJson(*s, "/v1/completions", completion);
    ASSERT_EQ(r["choices"][0]["finish_reason"], "stop") << r.dump();
    value = json::parse(Text(r), nullptr, false);
    ASSERT_FALSE(value.is_discarded()) << r.dump();
    EXPECT_TRUE(testing::SatisfiesSchema(kSchema, value, &why)) << why << ": " << value.dump();
  }
  // json_object: the reply opens an object (after whitespace, which JSON
  // allows), and a finished one parses.
  json r = testing::PostJson(*s, "/v1/completions",
                             Completion({{"response_format", {{"type", "json_object"}}}, {"max_tokens", 40}}));
  const std::string object = Text(r);
  size_t first = object.find_first_not_of(" \t\r\n");
  ASSERT_NE(first, std::string::npos) << r.dump();
  EXPECT_EQ(object[first], '{') << r.dump();
  if (r["choices"][0]["finish_reason"] == "stop") {
    EXPECT_TRUE(json::parse(Text(r)).is_object()) << r.dump();
  }
  // The Responses API's text.format.
  json resp = {{"input", "Report the build status."}, {"max_output_tokens", 400}, {"temperature", 1.0}, {"seed", 4},
               {"text", {{"format", {{"type", "json_schema"}, {"name", "status"}, {"schema", kSchema}}}}}};
  r = testing::PostJson(*s, "/v1/responses", resp);
  EXPECT_EQ(r["text"]["format"]["type"], "json_schema");
  std::string text;
  for (const json& item : r["output"])
    if (item["type"] == "message") text = item["content"][0]["text"];
  json value = json::parse(text, nullptr, false);
  ASSERT_FALSE(value.is_discarded()) << r.dump();
  std::string why;
  EXPECT_TRUE(testing::SatisfiesSchema(kSchema, value, &why)) << why << ": " << value.dump();
  // A schema the reply cannot follow is a 400.
  int status = 0;
  r = testing::PostJson(*s, "/v1/completions",
                        Completion({{"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", {{"type", "integer"}}}}}}}}),
                        &status);
  EXPECT_EQ(status, 400) << r.dump();
  EXPECT_NE(r.dump().find("response_format"), std::string::npos) << r.dump();
}

INSTANTIATE_TEST_SUITE_P(Archs, SamplingParamsEndToEnd, ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3),
                         [](const auto& info) { return info.param == model::Arch::kQwen3_5 ? "Qwen35" : "Qwen3"; });

}  // namespace
}  // namespace lineage::server
