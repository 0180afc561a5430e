// The cache page's data (/v1/cache/lineages) against the cache's own state,
// and llama-server's utility endpoints (/tokenize, /detokenize,
// /apply-template, /props, /slots) against its documented shapes, on the
// real engine behind real HTTP. The page itself is checked in a browser
// (cache_page_browser_test.cpp).
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <set>
#include <thread>

#include "e2e_stack.h"
#include "server/observe/request_history.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

class CachePage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_cache_page_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<Stack> Start(const std::string& cache_dir = "", ServerOptions so = {}, int max_live = 4) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.max_live = max_live;
    bo.scheduler.prefill_chunk_tokens = 64;
    bo.cache.ram_budget_bytes = int64_t{1} << 30;
    bo.cache_dir = cache_dir;
    bo.model_path = path_;
    bo.chat_template_source = "{{ template }}";
    so.build_info = "lineage test build";
    return testing::StartStack(path_, bo, so);
  }

  static json Get(Stack& s, const std::string& path, int* status = nullptr, const httplib::Headers& headers = {}) {
    httplib::Client c("127.0.0.1", s.http->port());
    auto res = c.Get(path.c_str(), headers);
    EXPECT_TRUE(res);
    if (!res) return {};
    if (status) *status = res->status;
    else EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body, nullptr, false);
  }

  static json Chat(const json& messages, int max_tokens = 4) {
    return {{"model", "tiny"}, {"messages", messages}, {"max_tokens", max_tokens}, {"temperature", 0}};
  }
  static json System(const std::string& text) { return {{"role", "system"}, {"content", text}}; }
  static json User(const std::string& text) { return {{"role", "user"}, {"content", text}}; }
  static int64_t Cached(const json& r) { return r["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(); }

  static inline std::filesystem::path dir_;
  static inline std::string path_;
};

int64_t CommonPrefix(const cache::Tokens& a, const cache::Tokens& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

TEST_F(CachePage, LineagesListWhatTheCacheHoldsWithTheirCheckpointsAndTree) {
  const std::string cache_dir = (dir_ / "lineages_disk").string();
  std::filesystem::remove_all(cache_dir);
  auto s = Start(cache_dir);
  const json sys = System("You are a coding agent. Read before you edit; run the tests after every change.");
  json a = json::array({sys, User("Find the bug in src/cache.")});
  json r1 = testing::PostJson(*s, "/v1/chat/completions", Chat(a));
  a.push_back({{"role", "assistant"}, {"content", r1["choices"][0]["message"]["content"]}});
  a.push_back(User("Fix it."));
  json r2 = testing::PostJson(*s, "/v1/chat/completions", Chat(a));
  json regen = testing::PostJson(*s, "/v1/chat/completions", Chat(a));  // a regenerate
  json b = testing::PostJson(*s, "/v1/chat/completions", Chat(json::array({sys, User("Write a benchmark.")})));
  json sub = testing::PostJson(*s, "/v1/chat/completions",
                               Chat(json::array({System("You are a sub-agent. One line."), User("Survey src.")})));

  json d = Get(*s, "/v1/cache/lineages");
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["object"], "cache.lineages");
  const std::vector<cache::LineageCache::EntryInfo> entries = s->backend->cache().Entries();
  std::map<uint64_t, const cache::LineageCache::EntryInfo*> by_id;
  for (const auto& e : entries) by_id[e.id] = &e;

  // Every RAM entry is listed once, with its length, kind and checkpoints.
  std::set<uint64_t> listed_ram;
  std::map<uint64_t, json> listed;
  for (const json& l : d["lineages"]) {
    const uint64_t id = l["id"];
    listed[id] = l;
    if (l["ram"].is_null()) continue;
    listed_ram.insert(id);
    ASSERT_TRUE(by_id.count(id)) << l.dump();
    const auto& e = *by_id[id];
    EXPECT_EQ(l["tokens"].get<size_t>(), e.tokens.size());
    EXPECT_EQ(l["anchor"].get<bool>(), e.anchor);
    EXPECT_EQ(l["ram"]["bytes"].get<int64_t>(), e.bytes);
    EXPECT_GT(e.bytes, 0);
    std::set<std::pair<int64_t, std::string>> want, got;
    for (const auto& c : e.checkpoints) want.insert({c.n, cache::PointKindName(c.kind)});
    for (const json& c : l["checkpoints"])
      if (std::find(c["tiers"].begin(), c["tiers"].end(), "ram") != c["tiers"].end())
        got.insert({c["n"].get<int64_t>(), c["kind"].get<std::string>()});
    EXPECT_EQ(got, want) << "entry " << id;
  }
  EXPECT_EQ(listed_ram.size(), entries.size());
  EXPECT_EQ(static_cast<int64_t>(entries.size()), d["totals"]["entries"].get<int64_t>());

  // Anchors: the shared system prompt's, extended by both sessions; and the sub-agent's.
  int anchors = 0;
  for (const auto& e : entries) anchors += e.anchor;
  EXPECT_EQ(anchors, 2);
  std::set<std::string> kinds;
  for (const auto& [id, l] : listed)
    for (const json& c : l["checkpoints"]) kinds.insert(c["kind"]);
  EXPECT_TRUE(kinds.count("history_end")) << d["lineages"].dump();

  // The tree: a parent is listed, shares exactly the tokens it says, and
  // nothing earlier shares more.
  for (const auto& [id, l] : listed) {
    if (l["parent"].is_null() || !by_id.count(id)) continue;
    const uint64_t parent = l["parent"];
    ASSERT_TRUE(listed.count(parent));
    if (!by_id.count(parent)) continue;
    EXPECT_EQ(l["shared_tokens"].get<int64_t>(), CommonPrefix(by_id[id]->tokens, by_id[parent]->tokens));
  }
  // The shared anchor is extended by the two sessions' lineages.
  int64_t most_extended = 0;
  for (const auto& [id, l] : listed)
    if (l["anchor"].get<bool>()) most_extended = std::max(most_extended, l["extended_by"].get<int64_t>());
  EXPECT_GE(most_extended, 2);

  // The last requests, oldest first, with the restored length the API returned.
  const json& recent = d["recent"];
  ASSERT_EQ(recent.size(), 5u);
  std::vector<json> replies = {r1, r2, regen, b, sub};
  for (size_t i = 0; i < replies.size(); ++i) {
    EXPECT_EQ(recent[i]["cached_tokens"].get<int64_t>(), Cached(replies[i])) << i;
    EXPECT_EQ(recent[i]["prompt_tokens"], replies[i]["usage"]["prompt_tokens"]) << i;
    EXPECT_EQ(recent[i]["status"], 200);
    EXPECT_EQ(recent[i]["path"], "/v1/chat/completions");
  }
  EXPECT_EQ(recent[0]["restore_kind"], "none");
  EXPECT_EQ(recent[3]["restore_kind"], "anchor");  // the second session starts at the anchor
  EXPECT_TRUE(d["in_flight"].empty());
  // The totals are /v1/cache/stats's.
  json stats = Get(*s, "/v1/cache/stats");
  EXPECT_EQ(d["totals"]["ram_bytes"], stats["ram_bytes"]);
  EXPECT_EQ(d["totals"]["ram_budget_bytes"], stats["ram_budget_bytes"]);
}

TEST_F(CachePage, TheDiskTierIsListedAfterARestart) {
  const std::string cache_dir = (dir_ / "restart_disk").string();
  std::filesystem::remove_all(cache_dir);
  size_t tokens = 0;
  {
    auto s = Start(cache_dir);
    json r = testing::PostJson(*s, "/v1/chat/completions", Chat(json::array({System("Be brief."), User("Hi.")})));
    tokens = r["usage"]["prompt_tokens"].get<size_t>();
  }  // the tier finishes its writes on the way down
  auto s = Start(cache_dir);
  json d = Get(*s, "/v1/cache/lineages");
  ASSERT_FALSE(d["lineages"].empty());
  bool found = false;
  for (const json& l : d["lineages"]) {
    EXPECT_TRUE(l["ram"].is_null());  // nothing in RAM after a restart
    EXPECT_EQ(l["tiers"], json::array({"disk"}));
    EXPECT_GT(l["disk"]["bytes"].get<int64_t>(), 0);
    EXPECT_LT(l["id"].get<uint64_t>(), uint64_t{1} << 53);  // exact in a browser's doubles
    found = found || (!l["anchor"].get<bool>() && l["tokens"].get<size_t>() >= tokens);
  }
  EXPECT_TRUE(found) << d["lineages"].dump();
}

TEST(RequestHistory, TracksProgressAndKeepsTheLastFew) {
  RequestHistory h(/*capacity=*/2);
  for (int64_t id = 1; id <= 3; ++id) {
    ApiRequest req;
    req.sampling.max_tokens = 10;
    Submission sub;
    sub.stream = std::make_shared<GenerationStream>();
    sub.prompt_tokens = 100;
    h.Begin(id, "/v1/messages", req, sub);
    json live = h.Live();
    ASSERT_EQ(live.size(), 1u);
    EXPECT_FALSE(live[0]["admitted"].get<bool>());
    EXPECT_EQ(h.Processing(), 0);
    sub.stream->Admitted(40);
    sub.stream->Prefilled(70);
    sub.stream->PushText("ab", 2);
    live = h.Live();
    EXPECT_EQ(live[0]["cached_tokens"], 40);
    EXPECT_EQ(live[0]["prefilled_tokens"], 70);
    EXPECT_EQ(live[0]["generated_tokens"], 2);
    EXPECT_EQ(h.Processing(), 1);
    json slots = h.Slots(3, 4096);
    ASSERT_EQ(slots.size(), 3u);
    EXPECT_EQ(slots[0]["id_task"], id);
    EXPECT_EQ(slots[0]["next_token"]["n_decoded"], 2);
    EXPECT_EQ(slots[0]["next_token"]["n_remain"], 8);
    EXPECT_FALSE(slots[1]["is_processing"].get<bool>());
    RequestReport report;
    report.prompt_tokens = 100;
    report.cached_tokens = 40;
    report.first_token_us = 1500;
    h.End(id, 200, report, "stop");
    EXPECT_TRUE(h.Live().empty());
  }
  json done = h.Finished();
  ASSERT_EQ(done.size(), 2u);  // the capacity
  EXPECT_EQ(done[0]["id"], 2);
  EXPECT_EQ(done[1]["id"], 3);
  EXPECT_EQ(done[1]["ttft_ms"], 1.5);
  EXPECT_EQ(done[1]["cached_tokens"], 40);
}

TEST_F(CachePage, TokenizeAndDetokenizeHaveLlamaServersShapes) {
  auto s = Start();
  const std::string text = "Hello, world! <|im_start|> caf\xc3\xa9";
  json t = testing::PostJson(*s, "/tokenize", {{"content", text}});
  ASSERT_TRUE(t["tokens"].is_array());
  ASSERT_FALSE(t["tokens"].empty());
  for (const json& id : t["tokens"]) EXPECT_TRUE(id.is_number_integer());
  // parse_special defaults to true: the control token is one id.
  json plain = testing::PostJson(*s, "/tokenize", {{"content", text}, {"parse_special", false}});
  EXPECT_LT(t["tokens"].size(), plain["tokens"].size());
  // Pieces: strings when they are UTF-8, byte lists otherwise; together the text.
  json pieces = testing::PostJson(*s, "/tokenize", {{"content", text}, {"with_pieces", true}});
  ASSERT_EQ(pieces["tokens"].size(), t["tokens"].size());
  std::string joined;
  for (size_t i = 0; i < pieces["tokens"].size(); ++i) {
    const json& p = pieces["tokens"][i];
    EXPECT_EQ(p["id"], t["tokens"][i]);
    if (p["piece"].is_string()) joined += p["piece"].get<std::string>();
    else
      for (const json& b : p["piece"]) joined += static_cast<char>(b.get<int>());
  }
  EXPECT_EQ(joined, text);
  // Detokenize inverts it.
  json back = testing::PostJson(*s, "/detokenize", {{"tokens", t["tokens"]}});
  EXPECT_EQ(back["content"], text);
  // Mixed prompts: strings and ids.
  json mixed = testing::PostJson(*s, "/tokenize", {{"content", json::array({"Hello,", t["tokens"][2], " world"})}});
  EXPECT_EQ(mixed["tokens"][mixed["tokens"].size() - testing::PostJson(*s, "/tokenize", {{"content", " world"}})["tokens"].size() - 1],
            t["tokens"][2]);
  // Bad input is a 400 naming the field.
  int status = 0;
  json bad = testing::PostJson(*s, "/detokenize", {{"tokens", json::array({1, 99999999})}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("tokens[1]"), std::string::npos) << bad.dump();
  testing::PostJson(*s, "/tokenize", {{"content", 5}}, &status);
  EXPECT_EQ(status, 400);
  httplib::Client c("127.0.0.1", s->http->port());
  auto res = c.Post("/tokenize", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST_F(CachePage, ApplyTemplateRendersThePromptTheChatRouteTokenizes) {
  auto s = Start();
  json messages = json::array({System("Be brief."), User("What is a lineage?")});
  json rendered = testing::PostJson(*s, "/apply-template", {{"messages", messages}});
  ASSERT_TRUE(rendered["prompt"].is_string());
  const std::string prompt = rendered["prompt"];
  EXPECT_NE(prompt.find("What is a lineage?"), std::string::npos);
  EXPECT_EQ(prompt.rfind("<|im_start|>assistant\n", 0), std::string::npos);  // it starts with the system turn
  json tokens = testing::PostJson(*s, "/tokenize", {{"content", prompt}});
  json reply = testing::PostJson(*s, "/v1/chat/completions", Chat(messages));
  EXPECT_EQ(tokens["tokens"].size(), reply["usage"]["prompt_tokens"].get<size_t>());
  int status = 0;
  testing::PostJson(*s, "/apply-template", {{"messages", "nope"}}, &status);
  EXPECT_EQ(status, 400);
}

TEST_F(CachePage, PropsAndSlotsDescribeTheServerAndItsLiveGenerations) {
  auto s = Start("", {}, /*max_live=*/1);
  json props = Get(*s, "/props");
  for (const char* key : {"default_generation_settings", "total_slots", "model_path", "chat_template", "modalities",
                          "build_info", "is_sleeping"})
    EXPECT_TRUE(props.contains(key)) << key;
  EXPECT_EQ(props["total_slots"], 1);
  EXPECT_EQ(props["model_path"], path_);
  EXPECT_EQ(props["chat_template"], "{{ template }}");
  EXPECT_EQ(props["build_info"], "lineage test build");
  EXPECT_EQ(props["default_generation_settings"]["n_ctx"], s->backend->context_tokens());

  json idle = Get(*s, "/slots");
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_FALSE(idle[0]["is_processing"].get<bool>());
  for (const char* key : {"id", "id_task", "n_ctx", "speculative", "is_processing", "params", "next_token"})
    EXPECT_TRUE(idle[0].contains(key)) << key;

  // A long generation: its slot is busy while it runs.
  std::thread long_run([&] {
    testing::PostJson(*s, "/v1/chat/completions",
                      {{"messages", json::array({User("Count to a thousand.")})}, {"max_tokens", 400},
                       {"temperature", 0}, {"ignore_eos", true}});
  });
  json busy;
  for (int i = 0; i < 500; ++i) {
    busy = Get(*s, "/slots");
    if (busy[0]["is_processing"].get<bool>() && busy[0]["next_token"]["n_decoded"].get<int64_t>() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(busy[0]["is_processing"].get<bool>()) << busy.dump();
  EXPECT_EQ(busy[0]["params"]["n_predict"], 400);
  EXPECT_GT(busy[0]["id_task"].get<int64_t>(), 0);
  int status = 0;
  Get(*s, "/slots?fail_on_no_slot=1", &status);
  const bool still_running = Get(*s, "/v1/cache/lineages")["in_flight"].size() == 1;
  if (still_running) {
    EXPECT_EQ(status, 503);
  }
  long_run.join();
  EXPECT_FALSE(Get(*s, "/slots")[0]["is_processing"].get<bool>());
  Get(*s, "/slots?fail_on_no_slot=1", &status);
  EXPECT_EQ(status, 200);
}

TEST_F(CachePage, ThePageAndItsDataNeedTheKeyWhichABrowserSendsAsBasic) {
  ServerOptions so;
  so.api_key = "page-key";
  auto s = Start("", so);
  int status = 0;
  httplib::Client c("127.0.0.1", s->http->port());
  auto res = c.Get("/cache");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  bool basic = false;
  for (auto [it, end] = res->headers.equal_range("WWW-Authenticate"); it != end; ++it)
    basic = basic || it->second.rfind("Basic ", 0) == 0;
  EXPECT_TRUE(basic);
  c.set_basic_auth("anyone", "page-key");
  res = c.Get("/cache");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("/v1/cache/lineages"), std::string::npos);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  res = c.Get("/v1/cache/lineages");
  EXPECT_EQ(res->status, 200);
  httplib::Client wrong("127.0.0.1", s->http->port());
  wrong.set_basic_auth("anyone", "not-the-key");
  EXPECT_EQ(wrong.Get("/cache")->status, 401);
  EXPECT_EQ(wrong.Post("/tokenize", R"({"content":"x"})", "application/json")->status, 401);
  Get(*s, "/props", &status, {{"Authorization", "Bearer page-key"}});
  EXPECT_EQ(status, 200);
  Get(*s, "/props", &status);
  EXPECT_EQ(status, 401);
}

}  // namespace
}  // namespace lineage::server
