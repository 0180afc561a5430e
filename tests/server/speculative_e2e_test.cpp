// Speculative decoding behind the HTTP server (random-weight tiny models,
// whose greedy replies loop, so prompt lookup drafts and drafts are taken):
// replies are the replies of plain decoding, greedy and seeded, streamed or
// not, with stop strings and max_tokens; /metrics counts the drafts; a turn
// after a speculative one restores from the cache and answers as a cold
// server does; bad speculative fields are 400s and the server goes on.
#include <gtest/gtest.h>

#include <thread>

#include "e2e_stack.h"
#include "http_test_util.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class SpeculativeEndToEnd : public ::testing::TestWithParam<model::Arch> {
 protected:
  static void SetUpTestSuite() { models_ = std::make_unique<testing::TinyQwenPair>("speculative", 9); }
  static void TearDownTestSuite() { models_.reset(); }
  std::unique_ptr<Stack> Start(engine::SpecType type = engine::SpecType::kNgram) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.cache.ram_budget_bytes = int64_t{1} << 27;
    bo.spec.type = type;
    return testing::StartStack(models_->Path(GetParam()), bo);
  }
  static json Completion(const json& extra) { return testing::RepeatingCompletion(extra, 48); }
  static std::string Text(const json& r) { return testing::CompletionText(r); }
  static int64_t Counter(Stack& s, const std::string& name) { return testing::MetricCounter(s, name); }
  static inline std::unique_ptr<testing::TinyQwenPair> models_;
};

TEST_P(SpeculativeEndToEnd, RepliesEqualPlainDecoding) {
  auto s = Start();
  const json none = {{"speculative.type", "none"}};
  for (json extra : {json{{"temperature", 0}}, json{{"temperature", 1.0}, {"seed", 7}},
                     json{{"temperature", 0.8}, {"top_k", 40}, {"seed", 3}, {"frequency_penalty", 0.5}},
                     json{{"max_tokens", 5}}, json{{"speculative.n_max", 3}},
                     // A bias makes a reply that repeats, whatever the model:
                     // drafts are taken there.
                     json{{"logit_bias", {{"300", 100}}}},
                     json{{"logit_bias", {{"300", 6}}}, {"temperature", 0.7}, {"seed", 5}},
                     json{{"logit_bias", {{"300", 4}}}}}) {
    SCOPED_TRACE(extra.dump());
    json plain_body = Completion(extra), spec_body = Completion(extra);
    for (auto& [k, v] : none.items()) plain_body[k] = v;
    const json plain = testing::PostJson(*s, "/v1/completions", plain_body);
    const json spec = testing::PostJson(*s, "/v1/completions", spec_body);
    EXPECT_EQ(Text(spec), Text(plain));
    EXPECT_EQ(spec["usage"]["completion_tokens"], plain["usage"]["completion_tokens"]);
    EXPECT_EQ(spec["choices"][0]["finish_reason"], plain["choices"][0]["finish_reason"]);
  }
  // The loops of a random model are drafted and taken.
  EXPECT_GT(Counter(*s, "lineage_draft_tokens_total"), 0);
  EXPECT_GT(Counter(*s, "lineage_draft_accepted_tokens_total"), 0);

  // Streamed, and cut by a stop string, as without drafts.
  const std::string full = Text(testing::PostJson(*s, "/v1/completions", Completion(none)));
  ASSERT_GT(full.size(), 12u);
  const std::string stop = full.substr(full.size() / 2, 3);
  for (bool stream : {false, true}) {
    json with_stop = Completion({{"stop", json::array({stop})}, {"stream", stream}});
    json without = with_stop;
    without["speculative.type"] = "none";
    httplib::Client c("127.0.0.1", s->http->port());
    auto a = c.Post("/v1/completions", with_stop.dump(), "application/json");
    auto b = c.Post("/v1/completions", without.dump(), "application/json");
    ASSERT_TRUE(a && b);
    std::string ta, tb;
    if (stream) {
      for (const auto& m : testing::ParseSse(a->body))
        if (m.data != "[DONE]") ta += json::parse(m.data)["choices"][0].value("text", "");
      for (const auto& m : testing::ParseSse(b->body))
        if (m.data != "[DONE]") tb += json::parse(m.data)["choices"][0].value("text", "");
    } else {
      ta = Text(json::parse(a->body));
      tb = Text(json::parse(b->body));
    }
    EXPECT_EQ(ta, tb) << "stream " << stream;
    EXPECT_EQ(ta.find(stop), std::string::npos);
  }
}

TEST_P(SpeculativeEndToEnd, SequencesSpeculatingTogetherEqualEachAlone) {
  // Four requests at once (one decode step verifies all their drafts): each
  // reply is the one plain decoding gives alone. (`n` > 1 and logprobs are
  // refused by this server with or without drafts.)
  auto s = Start();
  std::vector<json> bodies;
  for (int i = 0; i < 4; ++i)
    bodies.push_back(Completion({{"logit_bias", {{std::to_string(300 + i), 4 + i}}},
                                 {"temperature", i % 2 ? 0.9 : 0.0}, {"seed", 20 + i}}));
  const int64_t taken_before = Counter(*s, "lineage_draft_accepted_tokens_total");
  const auto [alone, together] = testing::AloneAndTogether(*s, bodies);
  EXPECT_EQ(together, alone);
  EXPECT_GT(Counter(*s, "lineage_draft_accepted_tokens_total"), taken_before);
}

TEST_P(SpeculativeEndToEnd, EnforcedToolCallsEqualPlainDecoding) {
  // tool_choice "required": rows are sampled through the grammar as in
  // plain decoding; a random model's calls repeat keys and values, so drafts
  // are verified inside the constrained reply too.
  auto s = Start();
  const int64_t drafts_before = Counter(*s, "lineage_draft_tokens_total");
  for (uint64_t seed : {1, 2, 3}) {
    json body = {{"messages", {{{"role", "user"}, {"content", "Look at the build and fix it."}}}},
                 {"tools", testing::ToolChoiceTools()}, {"tool_choice", "required"}, {"max_tokens", 300},
                 {"temperature", 1.0}, {"seed", seed}};
    const json spec = testing::PostJson(*s, "/v1/chat/completions", body);
    body["speculative.type"] = "none";
    const json plain = testing::PostJson(*s, "/v1/chat/completions", body);
    EXPECT_EQ(testing::WithoutCallIds(spec["choices"][0]["message"]),
              testing::WithoutCallIds(plain["choices"][0]["message"]))
        << seed;
    EXPECT_EQ(spec["choices"][0]["finish_reason"], plain["choices"][0]["finish_reason"]);
  }
  EXPECT_GT(Counter(*s, "lineage_draft_tokens_total"), drafts_before);
}

TEST_P(SpeculativeEndToEnd, TheTurnAfterASpeculativeTurnRestoresAndEqualsACold) {
  auto warm = Start();
  const json turn1 = {{"messages", {{{"role", "user"}, {"content", "Say it again and again: the build failed."}}}},
                      {"max_tokens", 40}, {"temperature", 0}, {"logit_bias", {{"300", 8}}}};
  const json r1 = testing::PostJson(*warm, "/v1/chat/completions", turn1);
  const std::string reply = r1["choices"][0]["message"]["content"];
  ASSERT_GT(Counter(*warm, "lineage_draft_accepted_tokens_total"), 0) << "no draft taken: the test proves nothing";
  json turn2 = turn1;
  turn2["messages"].push_back({{"role", "assistant"}, {"content", reply}});
  turn2["messages"].push_back({{"role", "user"}, {"content", "And once more."}});
  const json w = testing::PostJson(*warm, "/v1/chat/completions", turn2);
  // Restored from turn 1's entry (all of it where the template renders the
  // reply as it was generated, its history end where it does not).
  EXPECT_GT(w["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), 0) << w.dump();
  auto cold = Start(engine::SpecType::kNone);
  const json c = testing::PostJson(*cold, "/v1/chat/completions", turn2);
  EXPECT_EQ(w["choices"][0]["message"]["content"], c["choices"][0]["message"]["content"]);
}

TEST_P(SpeculativeEndToEnd, TheContextEndsTheReplyWhereItEndsWithoutDrafts) {
  // A reply cut by the context, not max_tokens: the cut falls on the same
  // token with drafts (whose verification step holds more rows) as without.
  EngineBackendOptions bo;
  bo.engine.num_threads = 2;
  bo.scheduler.context_tokens = 64;
  auto s = testing::StartStack(models_->Path(GetParam()), bo);
  json body = Completion({{"max_tokens", 200}, {"logit_bias", {{"300", 100}}}});
  const json spec = testing::PostJson(*s, "/v1/completions", body);
  body["speculative.type"] = "none";
  const json plain = testing::PostJson(*s, "/v1/completions", body);
  EXPECT_EQ(Text(spec), Text(plain));
  EXPECT_EQ(spec["usage"]["completion_tokens"], plain["usage"]["completion_tokens"]);
  EXPECT_EQ(spec["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(plain["choices"][0]["finish_reason"], "length");
  EXPECT_GT(Counter(*s, "lineage_draft_accepted_tokens_total"), 0);
}

TEST_P(SpeculativeEndToEnd, BadFieldsAre400sAndTheServerGoesOn) {
  auto s = Start();
  for (json bad : {json{{"speculative.type", "eagle9"}}, json{{"speculative.n_max", -1}},
                   json{{"speculative.n_min", "two"}}, json{{"speculative.type", 3}}}) {
    int status = 0;
    const json r = testing::PostJson(*s, "/v1/completions", Completion(bad), &status);
    EXPECT_EQ(status, 400) << bad.dump();
    EXPECT_NE(r.dump().find("speculative"), std::string::npos) << r.dump();
  }
  EXPECT_FALSE(Text(testing::PostJson(*s, "/v1/completions", Completion({}))).empty());
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeEndToEnd, ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3),
                         [](const auto& info) { return std::string(model::ArchName(info.param)); });

}  // namespace
}  // namespace lineage::server
