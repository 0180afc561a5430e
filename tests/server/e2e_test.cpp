// End-to-end: the real engine, tokenizer, chat template and lineage cache
// behind the HTTP server, on a random-weight tiny Qwen3.5 model written in
// the GGUF layout, talked to over real HTTP.
//
// Expected restore lengths are computed here from the chat template and the
// tokenizer directly (rendering without the generation prompt; the system +
// tools prefix), never read back from the server.
#include <algorithm>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "e2e_stack.h"
#include "expected_restore.h"
#include "http_test_util.h"
#include "node_clients.h"
#include "tools/chat_templates.h"
#include "model/load_model.h"
#include "model/shapes.h"
#include "tools/write_model.h"
#include "server/generation/engine_backend.h"
#include "server/http_server.h"
#include "server/generation/prompt_builder.h"
#include "tools/synthetic_vocab.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

using testing::Stack;

class EndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_e2e_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<Stack> Start(int64_t context_tokens = 0, cache::CacheMode mode = cache::CacheMode::kLineage,
                                      int64_t prefill_chunk_tokens = 64, const std::string& cache_dir = "") {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.context_tokens = context_tokens;
    bo.scheduler.max_live = 8;
    bo.scheduler.prefill_chunk_tokens = prefill_chunk_tokens;  // several chunks per prompt: interleaving is exercised
    bo.cache.mode = mode;
    bo.cache.ram_budget_bytes = int64_t{1} << 30;
    bo.cache_dir = cache_dir;
    return testing::StartStack(path_, bo);
  }

  static json Post(Stack& s, const std::string& path, const json& body, int* status = nullptr) {
    return testing::PostJson(s, path, body, status);
  }

  // The cache's live leases once the scheduler has let go (up to 5 s).
  static int64_t LiveLeasesAfterSettling(Stack& s) { return testing::LiveLeasesAfterSettling(s); }

  static json Tools() { return testing::ReadFileTool(); }
  static json System() {
    return {{"role", "system"}, {"content", "You are a careful coding agent. Follow the house style."}};
  }
  static json Request(const json& messages, int max_tokens = 8) {
    return {{"messages", messages}, {"tools", Tools()}, {"max_tokens", max_tokens}, {"temperature", 0}};
  }
  static int64_t Cached(const json& r) { return r["usage"]["prompt_tokens_details"]["cached_tokens"]; }
  static std::string Output(const json& r) {
    const json& m = r["choices"][0]["message"];
    return m.value("reasoning_content", "") + "|" + (m["content"].is_string() ? m["content"].get<std::string>() : "") +
           "|" + (m.contains("tool_calls") ? m["tool_calls"].dump() : "");
  }

  // Tokens of the conversation rendered with or without a generation prompt.
  static std::vector<int32_t> Tokens(const json& messages, bool generation_prompt) {
    return testing::ConversationTokens(path_, messages, Tools(), generation_prompt);
  }
  static int64_t HistoryTokens(const json& messages) { return Tokens(messages, false).size(); }
  // DESIGN.md §3.1-3.2 for the next turn of a conversation: the whole previous
  // prompt when the next prompt repeats it, else the previous history end.
  static int64_t NextTurnRestore(const json& previous, const json& next) {
    std::vector<int32_t> p = Tokens(previous, true), n = Tokens(next, true);
    int64_t shared = CommonPrefixTokens(p, n);
    return shared == static_cast<int64_t>(p.size()) ? shared : HistoryTokens(previous);
  }
  static int64_t AnchorTokens(const json& messages) { return testing::AnchorTokens(path_, messages, Tools()); }

  static std::filesystem::path dir_;
  static std::string path_;
};

std::filesystem::path EndToEnd::dir_;
std::string EndToEnd::path_;

json Assistant(const json& response) {
  json m = {{"role", "assistant"}, {"content", response["choices"][0]["message"]["content"].is_string()
                                                   ? response["choices"][0]["message"]["content"].get<std::string>()
                                                   : std::string()}};
  return m;
}

TEST_F(EndToEnd, TurnsRegenerateAndNewSessionRestoreWhereTheDesignSays) {
  auto s = Start();
  json conv = json::array({System(), {{"role", "user"}, {"content", "Open the README and summarise it."}}});
  json t1 = Post(*s, "/v1/chat/completions", Request(conv));
  EXPECT_EQ(Cached(t1), 0);  // cold
  const int64_t m1 = t1["usage"]["prompt_tokens"];

  // Regenerate (same prompt): restores at the history end (the prompt ends
  // with "<think>\n", which never reappears in later turns), same greedy text.
  json again = Post(*s, "/v1/chat/completions", Request(conv));
  EXPECT_EQ(Cached(again), HistoryTokens(conv));
  EXPECT_LT(Cached(again), m1);
  EXPECT_EQ(Output(again), Output(t1));

  // Turn 2: the history of turn 1 restores whole.
  json conv2 = conv;
  conv2.push_back(Assistant(t1));
  conv2.push_back({{"role", "user"}, {"content", "Now list the open issues."}});
  json t2 = Post(*s, "/v1/chat/completions", Request(conv2));
  EXPECT_EQ(Cached(t2), NextTurnRestore(conv, conv2));
  EXPECT_GE(Cached(t2), HistoryTokens(conv));

  // Turn 3 likewise from turn 2.
  json conv3 = conv2;
  conv3.push_back(Assistant(t2));
  conv3.push_back({{"role", "user"}, {"content", "Thanks."}});
  json t3 = Post(*s, "/v1/chat/completions", Request(conv3));
  EXPECT_EQ(Cached(t3), NextTurnRestore(conv2, conv3));
  EXPECT_GE(Cached(t3), HistoryTokens(conv2));

  // A new session with the same system prompt and tools starts at the anchor.
  json other = json::array({System(), {{"role", "user"}, {"content", "Fix the failing test in tests/core."}}});
  json n1 = Post(*s, "/v1/chat/completions", Request(other));
  EXPECT_EQ(Cached(n1), AnchorTokens(other));
  EXPECT_GT(Cached(n1), 50);  // the tools block alone is longer than that

  // The same turn, cold on a fresh server: identical greedy output.
  auto cold = Start();
  EXPECT_EQ(Output(Post(*cold, "/v1/chat/completions", Request(conv3))), Output(t3));
  EXPECT_EQ(Output(Post(*cold, "/v1/chat/completions", Request(other))), Output(n1));
}

// A coding agent's shape of traffic: a ~20k-token system prompt with tools on
// every request, a second session on the same system prompt, and sub-agents
// with their own shorter system prompt. Every second request is warm: the
// new session from the anchor, the next turn from the history, the second
// sub-agent from its own anchor.
TEST_F(EndToEnd, AgentSizedSystemPromptsMakeTheSecondRequestWarm) {
  auto s = Start(0, cache::CacheMode::kLineage, /*prefill_chunk_tokens=*/512);
  std::string rules = "You are a coding agent in a large C++ repository. House rules follow.\n";
  for (int i = 0; rules.size() < 90'000; ++i)
    rules += "Rule " + std::to_string(i) + ": keep module " + std::to_string(i % 37) + " free of state; test with case " +
             std::to_string(i * 7 % 101) + ".\n";
  const json big_system = {{"role", "system"}, {"content", rules}};
  json a = json::array({big_system, {{"role", "user"}, {"content", "Find the slow test."}}});
  json a1 = Post(*s, "/v1/chat/completions", Request(a));
  const int64_t m = a1["usage"]["prompt_tokens"];
  ASSERT_GT(m, 20'000);
  EXPECT_EQ(Cached(a1), 0);

  json b = json::array({big_system, {{"role", "user"}, {"content", "Rename the cache module."}}});
  json b1 = Post(*s, "/v1/chat/completions", Request(b));
  EXPECT_EQ(Cached(b1), AnchorTokens(b));
  EXPECT_GT(Cached(b1), m - 64);

  json a2 = a;
  a2.push_back(Assistant(a1));
  a2.push_back({{"role", "user"}, {"content", "Now fix it."}});
  EXPECT_EQ(Cached(Post(*s, "/v1/chat/completions", Request(a2))), NextTurnRestore(a, a2));

  const json sub_system = {{"role", "system"}, {"content", "You are a sub-agent. Report one line."}};
  json s1 = json::array({sub_system, {{"role", "user"}, {"content", "Survey src/engine."}}});
  json s2 = json::array({sub_system, {{"role", "user"}, {"content", "List what src/text exports."}}});
  // The template renders the tools first: the sub-agent shares them with the
  // first session and restores from a rung of its anchor (docs/cache.md).
  const std::vector<int32_t> ta = Tokens(a, true), ts = Tokens(s1, true);
  const int64_t shared = std::mismatch(ta.begin(), ta.end(), ts.begin(), ts.end()).first - ta.begin();
  const int64_t from_rung = Cached(Post(*s, "/v1/chat/completions", Request(s1)));
  EXPECT_GT(from_rung, 0);
  EXPECT_LE(from_rung, shared);
  EXPECT_GT(from_rung, shared - 1024);
  EXPECT_EQ(Cached(Post(*s, "/v1/chat/completions", Request(s2))), AnchorTokens(s2));
  EXPECT_GT(AnchorTokens(s2), 50);
}

TEST_F(EndToEnd, ARestartServesTheConversationFromDiskWithTheSameTokens) {
  const std::string cache_dir = (dir_ / "disk_cache").string();
  std::filesystem::remove_all(cache_dir);
  json conv = json::array({System(), {{"role", "user"}, {"content", "Where is the disk tier written?"}}});
  json t1;
  {
    auto first = Start(0, cache::CacheMode::kLineage, 64, cache_dir);
    t1 = Post(*first, "/v1/chat/completions", Request(conv));
    EXPECT_EQ(Cached(t1), 0);
  }  // the server stops; its disk tier finishes its writes
  json conv2 = conv;
  conv2.push_back(Assistant(t1));
  conv2.push_back({{"role", "user"}, {"content", "And how is it read back?"}});
  auto restarted = Start(0, cache::CacheMode::kLineage, 64, cache_dir);
  json t2 = Post(*restarted, "/v1/chat/completions", Request(conv2));
  EXPECT_EQ(Cached(t2), NextTurnRestore(conv, conv2));
  EXPECT_GE(Cached(t2), HistoryTokens(conv));
  EXPECT_GT(restarted->backend->cache().Stats().disk_restores, 0);
  // The same turn on a server without a cache: identical greedy output.
  auto cold = Start();
  EXPECT_EQ(Output(Post(*cold, "/v1/chat/completions", Request(conv2))), Output(t2));
}

TEST_F(EndToEnd, CacheStatsReportTheCachesOwnBudgets) {
  const std::string cache_dir = (dir_ / "stats_disk_cache").string();
  std::filesystem::remove_all(cache_dir);
  EngineBackendOptions bo;
  bo.engine.num_threads = 2;
  bo.cache.ram_budget_bytes = int64_t{3} << 28;
  bo.cache_dir = cache_dir;
  bo.cache_disk_max_bytes = int64_t{5} << 30;
  auto s = testing::StartStack(path_, bo);
  httplib::Client c("127.0.0.1", s->http->port());
  auto res = c.Get("/v1/cache/stats");
  ASSERT_TRUE(res);
  json stats = json::parse(res->body);
  EXPECT_EQ(stats["ram_budget_bytes"], int64_t{3} << 28);
  EXPECT_EQ(stats["disk_budget_bytes"], int64_t{5} << 30);
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  const std::string key = "lineage_cache_budget_bytes{tier=\"disk\"} ";
  const size_t at = metrics->body.find(key);
  ASSERT_NE(at, std::string::npos) << metrics->body;
  EXPECT_DOUBLE_EQ(std::stod(metrics->body.substr(at + key.size())), static_cast<double>(int64_t{5} << 30));
}

TEST_F(EndToEnd, ExactModeServesTheSameTokens) {
  auto lineage = Start();
  auto exact = Start(0, cache::CacheMode::kExact);
  json conv = json::array({System(), {{"role", "user"}, {"content", "What does the scheduler do?"}}});
  json a = Post(*lineage, "/v1/chat/completions", Request(conv, 12));
  json b = Post(*exact, "/v1/chat/completions", Request(conv, 12));
  json b2 = Post(*exact, "/v1/chat/completions", Request(conv, 12));
  EXPECT_EQ(Output(a), Output(b));
  EXPECT_EQ(Output(b2), Output(b));
  EXPECT_GT(Cached(b2), 0);
}

TEST_F(EndToEnd, EightConcurrentSessionsMatchTheirSoloRuns) {
  constexpr int kSessions = 8;
  std::vector<json> requests;
  for (int i = 0; i < kSessions; ++i)
    requests.push_back({{"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                                  {{"role", "user"}, {"content", "Task " + std::to_string(i) + ": refactor " +
                                                                                     std::string(i + 1, 'x')}}})},
                        {"max_tokens", 10 + i},
                        {"temperature", 0}});
  std::vector<std::string> solo(kSessions), together(kSessions);
  {
    auto s = Start();
    for (int i = 0; i < kSessions; ++i) solo[i] = Output(Post(*s, "/v1/chat/completions", requests[i]));
  }
  auto s = Start();
  std::vector<std::thread> threads;
  for (int i = 0; i < kSessions; ++i)
    threads.emplace_back([&, i] { together[i] = Output(Post(*s, "/v1/chat/completions", requests[i])); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kSessions; ++i) EXPECT_EQ(together[i], solo[i]) << "session " << i;
}

// A long prompt is prefilled in chunks between decode steps: a short
// request that arrives during it is answered before the long one's first token.
TEST_F(EndToEnd, ALongPrefillDoesNotFreezeOtherRequests) {
  auto s = Start(0, cache::CacheMode::kLineage, /*prefill_chunk_tokens=*/32);
  std::string words;
  // Long enough that its prefill (many 32-token chunks) far outlasts the short
  // request's prefill and decode on this machine, whatever its speed.
  for (int i = 0; i < 2800; ++i) words += "w" + std::to_string(i % 97) + " ";
  json long_body = {{"messages", {{{"role", "user"}, {"content", words}}}}, {"max_tokens", 2}, {"temperature", 0}};
  json short_body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 16}, {"temperature", 0}};
  json long_response, short_response;
  std::thread t([&] { long_response = Post(*s, "/v1/chat/completions", long_body); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the long prefill is under way
  short_response = Post(*s, "/v1/chat/completions", short_body);
  t.join();
  ASSERT_GT(long_response["usage"]["prompt_tokens"].get<int64_t>(), 4000);  // > 120 chunks of 32
  EXPECT_EQ(short_response["object"], "chat.completion");
  // The short request ended before the long one produced its first token.
  EXPECT_LT(short_response["timings"]["total_ms"].get<double>() + 100,
            long_response["timings"]["ttft_ms"].get<double>());
}

TEST_F(EndToEnd, StreamingAnthropicReportsTheCacheRead) {
  auto s = Start();
  json body = {{"max_tokens", 6}, {"temperature", 0}, {"system", System()["content"]},
               {"messages", {{{"role", "user"}, {"content", "hello"}}}}, {"stream", true}};
  httplib::Client c("127.0.0.1", s->http->port());
  auto first = c.Post("/v1/messages", body.dump(), "application/json");
  ASSERT_TRUE(first);
  auto second = c.Post("/v1/messages", body.dump(), "application/json");
  ASSERT_TRUE(second);
  auto events = testing::ParseSse(second->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().event, "message_start");
  EXPECT_EQ(events.back().event, "message_stop");
  json start = json::parse(events.front().data);
  EXPECT_GT(start["message"]["usage"]["cache_read_input_tokens"].get<int64_t>(), 0);
  // count_tokens agrees with the usage of the request itself.
  json counted = Post(*s, "/v1/messages/count_tokens", body);
  EXPECT_EQ(counted["input_tokens"].get<int64_t>(), start["message"]["usage"]["input_tokens"].get<int64_t>() +
                                                        start["message"]["usage"]["cache_read_input_tokens"].get<int64_t>());
}

TEST_F(EndToEnd, BadInputIsA4xxAndTheNextRequestIsServed) {
  auto s = Start(/*context_tokens=*/512);
  int status = 0;
  // The Qwen3.5 template raises without a user turn: a template error.
  json r = Post(*s, "/v1/chat/completions", {{"messages", {System()}}, {"max_tokens", 4}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("template"), std::string::npos) << r.dump();
  // A prompt longer than the context.
  json huge = json::array({{{"role", "user"}, {"content", std::string(6000, 'a') + " " + std::string(3000, 'b')}}});
  r = Post(*s, "/v1/chat/completions", {{"messages", huge}, {"max_tokens", 4}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("context"), std::string::npos) << r.dump();
  r = Post(*s, "/v1/messages", {{"max_tokens", 4}, {"messages", {{{"role", "user"}, {"content", 7}}}}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["type"], "error");
  // Served normally afterwards; the reply hits the context limit cleanly.
  json ok = Post(*s, "/v1/chat/completions",
                 {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 1000}, {"temperature", 0}});
  std::string finish = ok["choices"][0]["finish_reason"];
  EXPECT_TRUE(finish == "length" || finish == "stop") << finish;
  EXPECT_LE(ok["usage"]["total_tokens"].get<int64_t>(), 512);
}

TEST_F(EndToEnd, DisconnectFreesTheSequenceAndARetryLandsOnTheCache) {
  auto s = Start();
  json body = Request(json::array({System(), {{"role", "user"}, {"content", "Write a long essay."}}}), 4000);
  body["stream"] = true;
  httplib::Client c("127.0.0.1", s->http->port());
  c.set_read_timeout(120, 0);
  httplib::Request req = testing::JsonPost("/v1/chat/completions", body);
  int chunks = 0;
  // Go away after some generated text (the prompt is committed by then),
  // not after keep-alives that a slow machine may send during the prefill.
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (std::string_view(data, len).find("reasoning_content") != std::string_view::npos) ++chunks;
    return chunks < 3;
  };
  c.send(req);
  EXPECT_EQ(chunks, 3);  // the client saw generated text, then left
  // The scheduler lets go of the sequence: no lease stays pinned.
  EXPECT_EQ(LiveLeasesAfterSettling(*s), 0);
  body["stream"] = false;
  body["max_tokens"] = 4;
  json retry = Post(*s, "/v1/chat/completions", body);
  EXPECT_GT(Cached(retry), 0);
}

// A non-streaming client that gives up during a long prefill stops the work
// (the server notices the closed connection, not a failed write), and what
// was prefilled so far is kept, so the retry starts from it.
TEST_F(EndToEnd, NonStreamingClientThatLeavesStopsThePrefillAndTheRetryResumesIt) {
  auto s = Start(0, cache::CacheMode::kLineage, /*prefill_chunk_tokens=*/32);
  std::string words;
  for (int i = 0; i < 2800; ++i) words += "w" + std::to_string(i % 97) + " ";
  json body = {{"messages", {{{"role", "user"}, {"content", words}}}}, {"max_tokens", 2}, {"temperature", 0}};
  {
    httplib::Client c("127.0.0.1", s->http->port());
    c.set_read_timeout(0, 300'000);  // gives up long before a 4k-token prefill in 32-token chunks ends
    auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
    EXPECT_FALSE(res);
  }
  EXPECT_EQ(LiveLeasesAfterSettling(*s), 0);
  json retry = Post(*s, "/v1/chat/completions", body);
  int64_t prompt = retry["usage"]["prompt_tokens"];
  ASSERT_GT(prompt, 4000);
  // The first attempt was stopped part-way (it did not run to the prompt's
  // end) and its prefilled part was committed.
  EXPECT_GT(Cached(retry), 0);
  EXPECT_LT(Cached(retry), prompt - 64);
}

TEST_F(EndToEnd, OfficialClientLibrariesAgainstTheModel) {
  std::string why;
  std::string dir = testing::PrepareNodeClients(&why);
  if (dir.empty()) GTEST_SKIP() << why;
  auto s = Start();
  std::string out;
  int rc = testing::RunShell(
      "cd '" + dir + "' && timeout 300 node client.mjs http://127.0.0.1:" + std::to_string(s->http->port()) + " real", &out);
  EXPECT_EQ(rc, 0) << out;
}

}  // namespace
}  // namespace lineage::server
