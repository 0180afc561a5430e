// OpenAI `n`: several choices of one prompt, each its own sequence. Choice i
// of a seeded request is the reply of a single request seeded seed + i,
// streamed or not, with speculative decoding on; usage sums the choices'
// tokens; a stream of several choices ends once.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "e2e_stack.h"
#include "http_test_util.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class Choices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_choices_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::unique_ptr<Stack> Start(engine::SpecType spec = engine::SpecType::kNgram) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.spec.type = spec;
    return testing::StartStack(path_, bo);
  }
  static inline std::filesystem::path dir_;
  static inline std::string path_;
};

TEST_F(Choices, EachChoiceIsTheSingleReplyOfItsSeed) {
  auto s = Start();
  const json body = {{"prompt", "The build failed because"}, {"max_tokens", 16}, {"temperature", 1.0},
                     {"seed", 40}, {"n", 3}, {"logprobs", 1}};
  const json r = testing::PostJson(*s, "/v1/completions", body);
  ASSERT_EQ(r["choices"].size(), 3u) << r.dump();
  int64_t completion = 0;
  for (int i = 0; i < 3; ++i) {
    const json& c = r["choices"][i];
    EXPECT_EQ(c["index"], i);
    json one = body;
    one["n"] = 1;
    one["seed"] = 40 + i;
    const json single = testing::PostJson(*s, "/v1/completions", one);
    EXPECT_EQ(c["text"], single["choices"][0]["text"]) << i;
    EXPECT_EQ(c["logprobs"], single["choices"][0]["logprobs"]) << i;
    completion += single["usage"]["completion_tokens"].get<int64_t>();
  }
  EXPECT_NE(r["choices"][0]["text"], r["choices"][1]["text"]);
  EXPECT_EQ(r["usage"]["completion_tokens"], completion);
  EXPECT_EQ(r["usage"]["total_tokens"], r["usage"]["prompt_tokens"].get<int64_t>() + completion);
}

// The request log and the history (the cache page's recent requests) show
// a request of three choices as one entry covering all three: tokens out
// summed (usage's completion_tokens), choices=3.
TEST_F(Choices, TheLogAndTheHistoryCountEveryChoice) {
  EngineBackendOptions bo;
  bo.engine.num_threads = 2;
  ServerOptions so;
  std::mutex mu;
  std::vector<std::string> lines;
  so.log_sink = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
  };
  auto s = testing::StartStack(path_, bo, so);
  const json body = {{"prompt", "The build failed because"}, {"max_tokens", 12}, {"temperature", 1.0},
                     {"seed", 7}, {"n", 3}};
  const json r = testing::PostJson(*s, "/v1/completions", body);
  const int64_t out = r["usage"]["completion_tokens"];
  ASSERT_GT(out, 12) << "three choices of up to 12 tokens each: " << r.dump();
  httplib::Client c("127.0.0.1", s->http->port());
  auto res = c.Get("/v1/cache/lineages");
  ASSERT_TRUE(res);
  const json recent = json::parse(res->body)["recent"];
  ASSERT_FALSE(recent.empty());
  EXPECT_EQ(recent.back()["choices"], 3);
  EXPECT_EQ(recent.back()["completion_tokens"], out);
  std::lock_guard<std::mutex> lock(mu);
  const auto line = std::find_if(lines.begin(), lines.end(),
                                 [](const std::string& l) { return l.find(" POST /v1/completions ") != std::string::npos; });
  ASSERT_NE(line, lines.end());
  EXPECT_NE(line->find(" out=" + std::to_string(out) + " "), std::string::npos) << *line;
  EXPECT_NE(line->find(" choices=3 "), std::string::npos) << *line;
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find(" POST ") != std::string::npos; }),
            1) << "one line for the request";
}

TEST_F(Choices, StreamedChoicesEqualWholeOnesAndTheStreamEndsOnce) {
  auto s = Start();
  json body = {{"messages", {{{"role", "user"}, {"content", "Tell me about the build."}}}},
               {"max_tokens", 12}, {"temperature", 0.9}, {"seed", 7}, {"n", 2}};
  const json whole = testing::PostJson(*s, "/v1/chat/completions", body);
  ASSERT_EQ(whole["choices"].size(), 2u);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  httplib::Client c("127.0.0.1", s->http->port());
  auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  std::map<int64_t, std::string> content;
  std::map<int64_t, std::string> finish;
  int done = 0, usage_chunks = 0;
  std::string id;
  for (const testing::SseMessage& m : testing::ParseSse(res->body)) {
    if (m.data == "[DONE]") {
      ++done;
      continue;
    }
    const json chunk = json::parse(m.data);
    if (id.empty()) id = chunk["id"];
    EXPECT_EQ(chunk["id"], id);
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      ++usage_chunks;
      EXPECT_EQ(chunk["usage"]["completion_tokens"], whole["usage"]["completion_tokens"]);
      EXPECT_EQ(chunk["usage"]["completion_tokens_details"], whole["usage"]["completion_tokens_details"]);
    }
    for (const json& ch : chunk["choices"]) {
      const int64_t i = ch["index"];
      if (ch["delta"].contains("content")) content[i] += ch["delta"]["content"].get<std::string>();
      if (!ch["finish_reason"].is_null()) finish[i] = ch["finish_reason"];
    }
  }
  EXPECT_EQ(done, 1);
  EXPECT_EQ(usage_chunks, 1);
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(content[i], whole["choices"][i]["message"]["content"].get<std::string>()) << i;
    EXPECT_EQ(finish[i], whole["choices"][i]["finish_reason"]) << i;
  }
}

TEST_F(Choices, AClientThatLeavesAStreamOfSeveralEndsThemAll) {
  // Replies that never end by themselves (one token forced, up to the
  // context).
  auto s = Start(engine::SpecType::kNone);
  json body = {{"prompt", "The build failed because"}, {"max_tokens", 100000}, {"temperature", 1.0}, {"n", 3},
               {"stream", true}, {"logit_bias", {{"300", 100}}}};
  httplib::Client c("127.0.0.1", s->http->port());
  httplib::Request req = testing::JsonPost("/v1/completions", body);
  int chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 6; };
  c.send(req);
  EXPECT_EQ(chunks, 6);
  // Every choice's sequence is let go within a step or two (a choice left
  // running goes on to the tiny model's context: more than a second), and
  // the server goes on.
  int64_t live = -1;
  for (int i = 0; i < 16 && live != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    live = testing::MetricCounter(*s, "lineage_sequences_live");
  }
  EXPECT_EQ(live, 0);
  EXPECT_EQ(testing::LiveLeasesAfterSettling(*s), 0);
  const json r = testing::PostJson(*s, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}, {"n", 3}});
  EXPECT_EQ(r["choices"].size(), 3u);
}

TEST_F(Choices, TooManyAre400) {
  auto s = Start();
  int status = 0;
  const json r = testing::PostJson(*s, "/v1/completions", {{"prompt", "hi"}, {"n", 17}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(r.dump().find("'n'"), std::string::npos) << r.dump();
  EXPECT_FALSE(testing::CompletionText(testing::PostJson(*s, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}}))
                   .empty());
}

}  // namespace
}  // namespace lineage::server
