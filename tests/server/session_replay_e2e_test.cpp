// The server's cached tokens equal the simulator's prediction (issue 12):
// a recorded agent session (fixtures/agent_session.json: Claude Code on
// /v1/messages, an OpenAI chat agent on /v1/chat/completions) is played
// request by request against the random-weight tiny Qwen3.5 with a trace
// log, greedy and with a fixed reply length, each later assistant turn being
// what the server really replied. The trace the server wrote is then replayed
// through the simulator's lineage policy with the same cache options, budgets
// and state sizes, and the restore length of every request must equal the
// cached tokens the server reported (and the RAM both hold at the end and the
// evictions must agree, which checks that the simulator charged the same
// bytes). RAM-only with an ample and a tight budget, the lineage design off,
// and a disk tier.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e_stack.h"
#include "trace/trace_log.h"
#include "sim/policies/lineage_adapter.h"
#include "sim/replay.h"
#include "trace/trace_io.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

constexpr int64_t kReplyTokens = 12;
// The tiny model's KV takes 2 KiB a token: this holds one conversation of
// the session (at most 3.5k tokens) and little else.
constexpr int64_t kTightRamBytes = int64_t{8} << 20;

// What the server answered one request of the session.
struct Served {
  std::string name;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
};

struct Session {
  std::vector<Served> served;
  CacheStats stats;  // the server's cache after the last request
  sim::Trace trace;  // what --trace-log wrote
};

class SessionReplayEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_session_replay_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static EngineBackendOptions Options(int64_t ram_budget_bytes) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 2;
    bo.scheduler.max_live = 4;
    bo.scheduler.prefill_chunk_tokens = 256;
    bo.cache.ram_budget_bytes = ram_budget_bytes;
    return bo;
  }

  static json Fixture() {
    std::ifstream in(std::string(LINEAGE_SOURCE_DIR) + "/tests/server/fixtures/agent_session.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
  }

  // The simulator's shape of the tiny model: the state sizes the engine
  // charges. Speeds only place events in modelled time; the session is
  // played one request after another, and the trace's end_ms keeps the
  // replay in that order whatever the speeds.
  static sim::ModelShape TinyShape() {
    auto m = model::LoadModel(path_);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    sim::ModelShape s;
    s.name = "tiny-qwen3.5";
    s.kv_bytes_per_token = (*m)->config.kv_bytes_per_token();
    s.recurrent_bytes = (*m)->config.recurrent_bytes();
    s.prefill_tokens_per_s = 2000;
    s.decode_s_per_token = 0.01;
    s.disk_read_bytes_per_s = 1e9;
    s.disk_write_bytes_per_s = 1e9;
    s.ram_copy_bytes_per_s = 1e10;
    return s;
  }

  // An assistant message with "$reply": N gets the text and thinking the
  // server replied to request N in front of its own content (Anthropic) or
  // as its content and reasoning (OpenAI), as the client would send them.
  static void PutReplies(json& body, bool anthropic, const std::vector<json>& replies) {
    for (json& msg : body["messages"]) {
      if (!msg.contains("$reply")) continue;
      const json& reply = replies.at(msg["$reply"].get<size_t>());
      msg.erase("$reply");
      if (anthropic) {
        json content = json::array();
        for (const json& block : reply["content"])
          if (block["type"] == "thinking" || block["type"] == "text") content.push_back(block);
        for (const json& block : msg["content"]) content.push_back(block);
        msg["content"] = std::move(content);
      } else {
        const json& m = reply["choices"][0]["message"];
        if (m.contains("reasoning_content") && m["reasoning_content"].is_string())
          msg["reasoning_content"] = m["reasoning_content"];
        if (m.contains("content") && m["content"].is_string()) msg["content"] = m["content"];
        else if (!msg.contains("tool_calls")) msg["content"] = "";
      }
    }
  }

  // The server writes entries to disk behind the requests; the replay's
  // writes are instant. A client's think time between requests lets the
  // writer catch up: wait for it, so that what left RAM is on disk.
  static void WaitForDiskWrites(testing::Stack& stack) {
    for (int i = 0; i < 3000; ++i) {
      if (stack.backend->Stats().extra["disk_pending_writes"].get<int64_t>() == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "the disk tier's writes did not finish in 30 s";
  }

  // Plays the whole session against a fresh server writing its trace log.
  static Session Play(EngineBackendOptions o) {
    Session out;
    std::string trace_path = (dir_ / "trace.jsonl").string();
    auto log = trace::TraceLog::Open(trace_path);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    if (!log.ok()) return out;
    o.scheduler.trace_log = log->get();
    auto stack = testing::StartStack(path_, o);
    std::vector<json> replies;
    const json session = Fixture();
    for (const json& step : session["requests"]) {
      const std::string path = step["path"];
      SCOPED_TRACE(step["name"].get<std::string>());
      const bool anthropic = path == "/v1/messages";
      json body = step["body"];
      PutReplies(body, anthropic, replies);
      body["stream"] = false;
      body.erase("stream_options");
      body["max_tokens"] = kReplyTokens;
      body["temperature"] = 0;
      if (!o.cache_dir.empty()) WaitForDiskWrites(*stack);
      json r = testing::PostJson(*stack, path, body);
      Served s{step["name"]};
      if (anthropic) {
        s.cached_tokens = r["usage"]["cache_read_input_tokens"].get<int64_t>();
        s.prompt_tokens = r["usage"]["input_tokens"].get<int64_t>() + s.cached_tokens;
      } else {
        s.cached_tokens = r["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>();
        s.prompt_tokens = r["usage"]["prompt_tokens"].get<int64_t>();
      }
      out.served.push_back(s);
      replies.push_back(std::move(r));
    }
    out.stats = stack->backend->Stats();
    stack.reset();  // every request is logged before the trailer
    (*log)->Close();
    auto trace = sim::ReadTrace(trace_path);
    EXPECT_TRUE(trace.ok()) << trace.status().ToString();
    if (trace.ok()) out.trace = std::move(trace).value();
    return out;
  }

  // Replays the session's trace through the lineage policy with the server's
  // cache options and budgets; every request must restore what the server did.
  static void ExpectSimulatorAgrees(const Session& s, const EngineBackendOptions& o, int64_t disk_budget_bytes) {
    ASSERT_EQ(s.trace.requests.size(), s.served.size());
    for (size_t i = 0; i < s.served.size(); ++i)
      ASSERT_EQ(s.trace.requests[i].num_prompt_tokens, s.served[i].prompt_tokens) << s.served[i].name;
    sim::ModelShape shape = TinyShape();
    sim::PolicyOptions po{o.cache.ram_budget_bytes, disk_budget_bytes};
    sim::LineagePolicy policy(shape, po, o.cache.mode == cache::CacheMode::kExact, o.cache);
    auto replayed = sim::Replay(s.trace, shape, policy);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    std::string table;
    for (size_t i = 0; i < s.served.size(); ++i)
      table += s.served[i].name + ": prompt " + std::to_string(s.served[i].prompt_tokens) + ", server " +
               std::to_string(s.served[i].cached_tokens) + ", simulator " +
               std::to_string(replayed->restore_tokens[i]) + "\n";
    int64_t cached = 0;
    for (size_t i = 0; i < s.served.size(); ++i) {
      EXPECT_EQ(replayed->restore_tokens[i], s.served[i].cached_tokens) << s.served[i].name << "\n" << table;
      cached += s.served[i].cached_tokens;
    }
    EXPECT_GT(cached, 0) << table;
    EXPECT_EQ(policy.counters().ram_bytes, s.stats.ram_bytes) << table;
    EXPECT_EQ(policy.counters().evictions, s.stats.evictions_ram + s.stats.evictions_disk) << table;
  }

  static std::filesystem::path dir_;
  static std::string path_;
};

std::filesystem::path SessionReplayEndToEnd::dir_;
std::string SessionReplayEndToEnd::path_;

TEST_F(SessionReplayEndToEnd, RamOnlyCachedTokensEqualTheSimulatorsPrediction) {
  EngineBackendOptions o = Options(int64_t{1} << 30);
  Session s = Play(o);
  ASSERT_EQ(s.served.size(), 15u);
  EXPECT_EQ(s.served[5].prompt_tokens, s.served[4].prompt_tokens) << "the retry resends the same body";
  EXPECT_EQ(s.stats.evictions_ram, 0);
  // The next human turn re-renders the tool loop's replies without their
  // thinking; it restores at the history end of the turn's first request,
  // a generation prompt short of that prompt (not at the anchor).
  EXPECT_GT(s.served[6].cached_tokens, s.served[0].prompt_tokens - 16) << "a6 after the a1..a5 loop";
  EXPECT_GT(s.served[13].cached_tokens, s.served[11].prompt_tokens - 16) << "c3 after the c1..c2 loop";
  ExpectSimulatorAgrees(s, o, /*disk_budget_bytes=*/0);
}

// The off switch (--no-lineage): whole snapshots at m - 16 and m.
TEST_F(SessionReplayEndToEnd, WithTheLineageDesignOffTooTheSimulatorAgrees) {
  EngineBackendOptions o = Options(kTightRamBytes);
  o.cache.mode = cache::CacheMode::kExact;
  Session s = Play(o);
  ExpectSimulatorAgrees(s, o, /*disk_budget_bytes=*/0);
}

// A RAM budget that holds about one conversation: sessions B and C push
// session A's entries out, and both sides must evict the same ones.
TEST_F(SessionReplayEndToEnd, UnderATightRamBudgetTheSameEntriesAreEvicted) {
  EngineBackendOptions o = Options(kTightRamBytes);
  Session s = Play(o);
  EXPECT_GT(s.stats.evictions_ram, 0);
  ExpectSimulatorAgrees(s, o, /*disk_budget_bytes=*/0);
}

// The same budget with a disk tier behind it: what leaves RAM is restored
// from disk, by the server from its files and by the simulator from its
// byte-counting tier.
TEST_F(SessionReplayEndToEnd, WithADiskTierTheSameRestoresComeFromDisk) {
  EngineBackendOptions o = Options(kTightRamBytes);
  o.cache_dir = (dir_ / "disk").string();
  Session s = Play(o);
  EXPECT_GT(s.stats.evictions_ram, 0);
  EXPECT_GT(s.stats.extra["disk_restores"].get<int64_t>(), 0);
  EXPECT_EQ(s.stats.extra["disk_dropped_writes"].get<int64_t>(), 0);
  EXPECT_EQ(s.stats.extra["disk_failed_writes"].get<int64_t>(), 0);
  ExpectSimulatorAgrees(s, o, o.cache_disk_max_bytes);
}

}  // namespace
}  // namespace lineage::server
