// Drafting with the model's MTP block behind the HTTP server (`--spec-type
// draft-mtp`, tiny random models that carry the block): replies equal plain
// decoding (greedy, seeded, several requests in one step, enforced tool
// calls), /metrics counts the block's drafts, the turn after a drafted one
// restores from the cache and answers as a cold server without the block,
// and a request or a server that asks for the block where there is none
// gets a clear error.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "e2e_stack.h"
#include "http_test_util.h"
#include "tool_choice_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class MtpEndToEnd : public ::testing::TestWithParam<model::Arch> {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_mtp_e2e_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    for (model::Arch arch : {model::Arch::kQwen3_5, model::Arch::kQwen3_5Moe}) {
      Status st = testing::WriteTinyModel(arch, Path(arch), 5, true);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string Path(model::Arch arch) { return (dir_ / (std::string(model::ArchName(arch)) + ".gguf")).string(); }

  std::unique_ptr<Stack> Start(engine::SpecType type = engine::SpecType::kMtp) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.engine.mtp = type == engine::SpecType::kMtp;
    bo.cache.ram_budget_bytes = int64_t{1} << 27;
    bo.spec.type = type;
    return testing::StartStack(Path(GetParam()), bo);
  }
  static json Completion(const json& extra) { return testing::RepeatingCompletion(extra, 40); }
  static std::string Text(const json& r) { return testing::CompletionText(r); }
  static int64_t Counter(Stack& s, const std::string& name) { return testing::MetricCounter(s, name); }
  static inline std::filesystem::path dir_;
};

TEST_P(MtpEndToEnd, RepliesEqualPlainDecoding) {
  auto s = Start();
  for (json extra : {json{{"temperature", 0}}, json{{"temperature", 1.0}, {"seed", 7}},
                     json{{"temperature", 0.8}, {"top_k", 40}, {"seed", 3}, {"presence_penalty", 0.5}},
                     json{{"max_tokens", 3}}, json{{"speculative.n_max", 2}}, json{{"logit_bias", {{"300", 4}}}}}) {
    SCOPED_TRACE(extra.dump());
    json plain_body = Completion(extra);
    plain_body["speculative.type"] = "none";
    const json plain = testing::PostJson(*s, "/v1/completions", plain_body);
    const json mtp = testing::PostJson(*s, "/v1/completions", Completion(extra));
    EXPECT_EQ(Text(mtp), Text(plain));
    EXPECT_EQ(mtp["usage"]["completion_tokens"], plain["usage"]["completion_tokens"]);
    EXPECT_EQ(mtp["choices"][0]["finish_reason"], plain["choices"][0]["finish_reason"]);
  }
  EXPECT_GT(Counter(*s, "lineage_draft_tokens_total"), 0) << "the block drafted nothing: the test proves nothing";

  // Four at once: one drafting pass per depth and one verification step
  // for all of them; each reply is the one plain decoding gives alone.
  std::vector<json> bodies;
  for (int i = 0; i < 4; ++i)
    bodies.push_back(Completion({{"temperature", i % 2 ? 0.9 : 0.0}, {"seed", 20 + i}, {"speculative.n_max", 1 + i}}));
  const auto [alone, together] = testing::AloneAndTogether(*s, bodies);
  EXPECT_EQ(together, alone);
}

TEST_P(MtpEndToEnd, EnforcedToolCallsEqualPlainDecoding) {
  auto s = Start();
  for (uint64_t seed : {1, 2}) {
    json body = {{"messages", {{{"role", "user"}, {"content", "Look at the build and fix it."}}}},
                 {"tools", testing::ToolChoiceTools()}, {"tool_choice", "required"}, {"max_tokens", 200},
                 {"temperature", 1.0}, {"seed", seed}};
    const json mtp = testing::PostJson(*s, "/v1/chat/completions", body);
    body["speculative.type"] = "none";
    const json plain = testing::PostJson(*s, "/v1/chat/completions", body);
    EXPECT_EQ(testing::WithoutCallIds(mtp["choices"][0]["message"]), testing::WithoutCallIds(plain["choices"][0]["message"]))
        << seed;
  }
}

TEST_P(MtpEndToEnd, TheTurnAfterADraftedTurnRestoresAndEqualsACold) {
  auto warm = Start();
  const json turn1 = {{"messages", {{{"role", "user"}, {"content", "Say it again and again: the build failed."}}}},
                      {"max_tokens", 30}, {"temperature", 0}};
  const json r1 = testing::PostJson(*warm, "/v1/chat/completions", turn1);
  ASSERT_GT(Counter(*warm, "lineage_draft_tokens_total"), 0);
  json turn2 = turn1;
  turn2["messages"].push_back({{"role", "assistant"}, {"content", r1["choices"][0]["message"]["content"]}});
  turn2["messages"].push_back({{"role", "user"}, {"content", "And once more."}});
  const json w = testing::PostJson(*warm, "/v1/chat/completions", turn2);
  EXPECT_GT(w["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), 0) << w.dump();
  auto cold = Start(engine::SpecType::kNone);  // no block at all: its pages have one layer fewer
  const json c = testing::PostJson(*cold, "/v1/chat/completions", turn2);
  EXPECT_EQ(w["choices"][0]["message"]["content"], c["choices"][0]["message"]["content"]);
}

TEST_P(MtpEndToEnd, AskingForABlockThatIsNotThereIsAClearError) {
  // A server started without the block refuses draft-mtp per request, and goes on.
  auto s = Start(engine::SpecType::kNgram);
  int status = 0;
  const json r = testing::PostJson(*s, "/v1/completions", Completion({{"speculative.type", "draft-mtp"}}), &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(r.dump().find("draft-mtp"), std::string::npos) << r.dump();
  EXPECT_FALSE(Text(testing::PostJson(*s, "/v1/completions", Completion({}))).empty());
  // A file without the block cannot be served with it.
  const std::string plain = (dir_ / "plain.gguf").string();
  ASSERT_TRUE(testing::WriteTinyModel(GetParam(), plain, 5).ok());
  auto m = model::LoadModel(plain);
  ASSERT_TRUE(m.ok());
  auto tok = text::LoadTokenizer(plain);
  ASSERT_TRUE(tok.ok());
  EngineBackendOptions bo;
  bo.engine.mtp = true;
  bo.spec.type = engine::SpecType::kMtp;
  auto backend = EngineBackend::Create(*m, *tok, std::nullopt, bo);
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.status().message().find("multi-token-prediction"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, MtpEndToEnd, ::testing::Values(model::Arch::kQwen3_5, model::Arch::kQwen3_5Moe),
                         [](const auto& info) { return std::string(model::ArchName(info.param)); });

}  // namespace
}  // namespace lineage::server
