// End-to-end: two `lineage serve` replicas sharing one disk directory
// (--cache-disk-shared) behind HAProxy with deploy/haproxy.cfg, on loopback.
// Several multi-turn sessions go through the proxy — some with an
// x-session-id header, some keyed by the hash of their body's leading bytes.
// Every later turn must be cached and stay on its replica; then the replica
// serving session 0 stops mid-conversation and its sessions continue on the
// other one, restored from the shared disk (more cached than the shared
// system prefix, which is all that replica could hold on its own), with
// greedy replies equal to a cold run on a fresh server.
//
// Skipped when haproxy is not installed, except under CI (CI=1), where the
// package is part of scripts/setup.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include "e2e_stack.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::Stack;

constexpr int kSessions = 6;
constexpr int kTurnsBefore = 3;  // turns before the replica stops
constexpr int kTurnsAfter = 2;

bool HaveHaproxy() { return std::system("command -v haproxy >/dev/null 2>&1") == 0; }

// HAProxy in the foreground with the deployed configuration.
class Proxy {
 public:
  Proxy(int port, int replica1, int replica2, int hash_body_bytes) : port_(port) {
    pid_ = ::fork();
    if (pid_ != 0) return;
    auto addr = [](int p) { return "127.0.0.1:" + std::to_string(p); };
    ::setenv("LINEAGE_PROXY_BIND", addr(port).c_str(), 1);
    ::setenv("LINEAGE_REPLICA_1", addr(replica1).c_str(), 1);
    ::setenv("LINEAGE_REPLICA_2", addr(replica2).c_str(), 1);
    ::setenv("LINEAGE_HASH_BODY_BYTES", std::to_string(hash_body_bytes).c_str(), 1);
    if (!std::getenv("LINEAGE_TEST_LOG") && !std::freopen("/dev/null", "w", stderr)) _exit(126);
    const std::string cfg = std::string(LINEAGE_SOURCE_DIR) + "/deploy/haproxy.cfg";
    ::execlp("haproxy", "haproxy", "-db", "-f", cfg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ~Proxy() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  int port() const { return port_; }

 private:
  int port_;
  pid_t pid_ = -1;
};

struct Reply {
  json body;
  std::string replica;        // the proxy's name for the server that answered
  int64_t anchor_tokens = 0;  // X-Lineage-Anchor-Tokens
  int64_t cached() const { return body["usage"]["prompt_tokens_details"]["cached_tokens"]; }
  int64_t prompt() const { return body["usage"]["prompt_tokens"]; }
  std::string text() const { return body["choices"][0]["message"]["content"].get<std::string>(); }
};

// Retries while the proxy has no server up yet (its health checks rising).
Reply PostVia(int port, const json& request, const std::string& session_id) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(300, 0);
  httplib::Headers headers;
  if (!session_id.empty()) headers.emplace("x-session-id", session_id);
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto res = c.Post("/v1/chat/completions", headers, request.dump(), "application/json");
    if (res && res->status == 200) {
      Reply r;
      r.body = json::parse(res->body);
      r.replica = res->get_header_value("X-Lineage-Replica");
      const std::string anchor = res->get_header_value("X-Lineage-Anchor-Tokens");
      EXPECT_FALSE(anchor.empty()) << "no X-Lineage-Anchor-Tokens header";
      r.anchor_tokens = anchor.empty() ? 0 : std::stoll(anchor);
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ADD_FAILURE() << "no 200 through the proxy";
  return {};
}

class Replicas : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_replicas_" + std::to_string(::getpid()));
    path_ = testing::WriteTinyQwen35(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::unique_ptr<Stack> Start(const std::string& cache_dir) {
    EngineBackendOptions bo;
    bo.engine.num_threads = 1;
    bo.scheduler.max_live = 4;
    bo.cache.ram_budget_bytes = int64_t{1} << 30;
    bo.cache_dir = cache_dir;
    bo.cache_disk_shared = !cache_dir.empty();
    ServerOptions so;
    so.port = 0;
    return testing::StartStack(path_, bo, so);
  }

  static std::string SystemPrompt() {
    std::string s = "You are a careful coding agent working in a large repository. ";
    while (s.size() < 1200) s += "Read before you write; keep every change small and tested. ";
    return s;
  }
  static json Request(const json& messages) {
    return {{"model", "tiny"}, {"messages", messages}, {"max_tokens", 8}, {"temperature", 0}};
  }
  static json UserTurn(int session, int turn) {
    return {{"role", "user"},
            {"content", "Session " + std::to_string(session) + " asks, turn " + std::to_string(turn) +
                            ": look at module " + std::to_string(session * 7 + turn) + " and explain what it does."}};
  }

  static inline std::filesystem::path dir_;
  static inline std::string path_;
};

TEST_F(Replicas, SessionsStayOnTheirReplicaAndSurviveItsLossThroughTheSharedDisk) {
  if (!HaveHaproxy()) {
    if (std::getenv("CI")) FAIL() << "haproxy is missing (scripts/setup installs it)";
    GTEST_SKIP() << "haproxy is not installed";
  }
  const std::string cache_dir = (dir_ / "shared-cache").string();
  std::map<std::string, std::unique_ptr<Stack>> replicas;
  replicas["r1"] = Start(cache_dir);
  replicas["r2"] = Start(cache_dir);
  // Hash the system prompt's JSON and the start of the first user turn.
  const int hash_body_bytes = static_cast<int>(Request(json::array({{{"role", "system"}, {"content", SystemPrompt()}}}))
                                                   .dump()
                                                   .size()) +
                              40;
  Proxy proxy(testing::FreeLoopbackPort(), replicas["r1"]->http->port(), replicas["r2"]->http->port(), hash_body_bytes);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // health checks

  std::vector<json> messages(kSessions);
  std::vector<std::string> home(kSessions);
  auto session_id = [](int s) { return s % 2 == 0 ? "session-" + std::to_string(s) : std::string(); };
  auto turn = [&](int s, int t) {
    if (t == 0) messages[s] = json::array({{{"role", "system"}, {"content", SystemPrompt()}}});
    messages[s].push_back(UserTurn(s, t));
    Reply r = PostVia(proxy.port(), Request(messages[s]), session_id(s));
    messages[s].push_back({{"role", "assistant"}, {"content", r.text()}});
    return r;
  };

  for (int t = 0; t < kTurnsBefore; ++t) {
    for (int s = 0; s < kSessions; ++s) {
      SCOPED_TRACE("session " + std::to_string(s) + " turn " + std::to_string(t));
      Reply r = turn(s, t);
      if (t == 0) home[s] = r.replica;
      EXPECT_EQ(r.replica, home[s]) << "the session left its replica";
      if (t > 0) {
        EXPECT_GT(r.cached(), r.anchor_tokens) << "a later turn restores its own lineage, not only the system prompt";
        std::printf("  session %d turn %d on %s: %lld of %lld prompt tokens cached (anchor %lld)\n", s, t,
                    r.replica.c_str(), static_cast<long long>(r.cached()), static_cast<long long>(r.prompt()),
                    static_cast<long long>(r.anchor_tokens));
      }
    }
  }
  const std::string gone = home[0];
  const std::string survivor = gone == "r1" ? "r2" : "r1";
  std::printf("  homes:");
  for (const std::string& h : home) std::printf(" %s", h.c_str());
  std::printf("; stopping %s\n", gone.c_str());

  replicas[gone].reset();  // stops serving; its pending disk writes finish first
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // marked down; the survivor rescans

  int moved = 0;
  for (int t = kTurnsBefore; t < kTurnsBefore + kTurnsAfter; ++t) {
    for (int s = 0; s < kSessions; ++s) {
      SCOPED_TRACE("session " + std::to_string(s) + " turn " + std::to_string(t));
      const json before_reply = messages[s];
      Reply r = turn(s, t);
      EXPECT_EQ(r.replica, survivor);
      EXPECT_GT(r.cached(), r.anchor_tokens);
      if (home[s] != gone || t != kTurnsBefore) continue;
      ++moved;
      std::printf("  session %d moved to %s: %lld of %lld prompt tokens cached from the shared disk (anchor %lld)\n", s,
                  r.replica.c_str(), static_cast<long long>(r.cached()), static_cast<long long>(r.prompt()),
                  static_cast<long long>(r.anchor_tokens));
      // A cold run of the same request on a fresh server with no cache: the same greedy reply.
      std::unique_ptr<Stack> cold = Start("");
      json cold_messages = before_reply;
      cold_messages.push_back(UserTurn(s, t));
      json c = testing::PostJson(*cold, "/v1/chat/completions", Request(cold_messages));
      EXPECT_EQ(c["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
      EXPECT_EQ(c["choices"][0]["message"]["content"], r.text()) << "restored from disk, the reply differs";
    }
  }
  EXPECT_GT(moved, 0);
}

}  // namespace
}  // namespace lineage::server
