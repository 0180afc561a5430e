// Log-probabilities of the generated tokens (OpenAI chat `logprobs` +
// `top_logprobs`, completions `logprobs`: N): each token's value and its
// alternatives' equal log softmax of the engine's own logits at that step
// (an engine of the same file run beside the server, token by token), with
// and without speculative decoding (verified rows equal decode rows), and
// streamed chunks carry the same values as the whole reply. Out-of-range
// values are 400s naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "e2e_stack.h"
#include "engine/engine.h"
#include "engine/sampler.h"
#include "http_test_util.h"
#include "model/load_model.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class Logprobs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_logprobs_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<Stack> Start(engine::SpecType type) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.spec.type = type;
    return testing::StartStack(path_, bo);
  }

  // The greedy continuation of `ids` by an engine of its own, up to n tokens
  // or the end token (not reported), each step's logprobs with `top` alternatives.
  // `forced` >= 0: that token every step (a logit_bias of +100 on it).
  static std::vector<engine::Logprobs> Reference(const text::Tokenizer& tok, std::vector<int32_t> ids, int64_t n,
                                                 int32_t top, std::vector<int32_t>* tokens, int32_t forced = -1) {
    auto m = model::LoadModel(path_);
    EXPECT_TRUE(m.ok());
    engine::EngineOptions o;
    o.num_threads = 1;
    auto e = engine::Engine::Create(*m, o);
    EXPECT_TRUE(e.ok());
    engine::Sequence seq = (*e)->NewSequence();
    engine::PrefillResult r;
    EXPECT_TRUE((*e)->Prefill(seq, ids, {}, &r).ok());
    std::vector<float> logits = r.logits;
    std::vector<engine::Logprobs> out;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t t = forced >= 0 ? forced : engine::Argmax(logits);
      if (tok.IsEndOfGeneration(t)) break;
      out.push_back(engine::LogprobsOf(logits, t, top));
      tokens->push_back(t);
      engine::Sequence* one[] = {&seq};
      EXPECT_TRUE((*e)->Decode(one, std::span(&t, 1), &logits).ok());
    }
    return out;
  }

  static inline std::filesystem::path dir_;
  static inline std::string path_;
};

constexpr const char* kPrompt = "The build failed because the build failed because";

TEST_F(Logprobs, CompletionsEqualTheEnginesOwnWithAndWithoutDrafts) {
  auto tok = text::LoadTokenizer(path_);
  ASSERT_TRUE(tok.ok());
  std::vector<int32_t> ids = tok->Encode(kPrompt, {.parse_special = true, .add_special = true});
  // Plain greedy, and a reply forced to repeat one token (logprobs are the
  // model's, before the bias), which prompt lookup drafts and takes.
  for (int32_t forced : {-1, 300})
  for (engine::SpecType type : {engine::SpecType::kNone, engine::SpecType::kNgram}) {
    SCOPED_TRACE(forced);
    std::vector<int32_t> want_tokens;
    const std::vector<engine::Logprobs> want = Reference(*tok, ids, 12, 3, &want_tokens, forced);
    ASSERT_GE(want.size(), 4u);
    auto s = Start(type);
    json body = {{"prompt", kPrompt}, {"max_tokens", 12}, {"temperature", 0}, {"logprobs", 3}};
    if (forced >= 0) body["logit_bias"] = {{std::to_string(forced), 100}};
    const json r = testing::PostJson(*s, "/v1/completions", body);
    if (forced >= 0 && type == engine::SpecType::kNgram) {
      EXPECT_GT(testing::MetricCounter(*s, "lineage_draft_accepted_tokens_total"), 0);
    }
    const json& lp = r["choices"][0]["logprobs"];
    ASSERT_TRUE(lp.is_object()) << r.dump();
    ASSERT_EQ(lp["tokens"].size(), want.size()) << r.dump();
    int64_t offset = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(i);
      // Token texts that are not UTF-8 by themselves reach JSON repaired.
      const std::string bytes(tok->TokenBytes(want_tokens[i]));
      if (text::IsValidUtf8(bytes)) {
        EXPECT_EQ(lp["tokens"][i].get<std::string>(), bytes);
      }
      EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), want[i].token, 1e-4);
      ASSERT_EQ(lp["top_logprobs"][i].size(), 3u);
      for (const auto& [id, v] : want[i].top) {
        const std::string alt(tok->TokenBytes(id));
        if (!text::IsValidUtf8(alt)) continue;
        ASSERT_TRUE(lp["top_logprobs"][i].contains(alt)) << lp["top_logprobs"][i].dump();
        EXPECT_NEAR(lp["top_logprobs"][i][alt].get<double>(), v, 1e-4);
      }
      EXPECT_EQ(lp["text_offset"][i].get<int64_t>(), offset);
      offset += static_cast<int64_t>(tok->TokenBytes(want_tokens[i]).size());
      EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
    }
  }
}

TEST_F(Logprobs, ChatStreamedEqualsWholeAndGreedyIsTheTopOne) {
  auto s = Start(engine::SpecType::kNgram);
  json body = {{"messages", {{{"role", "user"}, {"content", "Say the build failed, twice."}}}},
               {"max_tokens", 10}, {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 2}};
  const json whole = testing::PostJson(*s, "/v1/chat/completions", body);
  const json& content = whole["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), whole["usage"]["completion_tokens"].get<size_t>()) << whole.dump();
  for (const json& t : content) {
    ASSERT_EQ(t["top_logprobs"].size(), 2u);
    // Greedy: the token is the most likely one; alternatives most likely first.
    EXPECT_EQ(t["logprob"], t["top_logprobs"][0]["logprob"]);
    EXPECT_GE(t["top_logprobs"][0]["logprob"].get<double>(), t["top_logprobs"][1]["logprob"].get<double>());
    const std::string text = t["token"];
    if (text.find("\xEF\xBF\xBD") == std::string::npos) {
      EXPECT_EQ(t["bytes"].size(), text.size());
    }
  }
  body["stream"] = true;
  httplib::Client c("127.0.0.1", s->http->port());
  auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  json streamed = json::array();
  for (const testing::SseMessage& m : testing::ParseSse(res->body)) {
    if (m.data == "[DONE]") continue;
    const json chunk = json::parse(m.data);
    for (const json& choice : chunk["choices"])
      if (choice["logprobs"].is_object())
        for (const json& t : choice["logprobs"]["content"]) streamed.push_back(t);
  }
  EXPECT_EQ(streamed, content);
  // Without logprobs: null, as before.
  body.erase("logprobs");
  body.erase("top_logprobs");
  body["stream"] = false;
  EXPECT_TRUE(testing::PostJson(*s, "/v1/chat/completions", body)["choices"][0]["logprobs"].is_null());
}

TEST_F(Logprobs, OutOfRangeValuesAre400s) {
  auto s = Start(engine::SpecType::kNgram);
  const json chat = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}};
  for (json bad : {json{{"logprobs", true}, {"top_logprobs", 21}}, json{{"logprobs", "yes"}},
                   json{{"top_logprobs", 2}}}) {
    json body = chat;
    for (auto& [k, v] : bad.items()) body[k] = v;
    int status = 0;
    const json r = testing::PostJson(*s, "/v1/chat/completions", body, &status);
    EXPECT_EQ(status, 400) << bad.dump();
    EXPECT_NE(r.dump().find("logprobs"), std::string::npos) << r.dump();
  }
  int status = 0;
  testing::PostJson(*s, "/v1/completions", {{"prompt", "hi"}, {"logprobs", 6}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_FALSE(testing::CompletionText(testing::PostJson(*s, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}}))
                   .empty());
}

}  // namespace
}  // namespace lineage::server
