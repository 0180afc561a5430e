// The request path under failure: admission tickets that cannot leak, one
// log line and one count per request, bodies of any content type and size,
// deep JSON, and slow or greedy connections. Loopback only; every loop and
// wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "fake_backend.h"
#include "http_test_util.h"
#include "server/http_server.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
using testing::FakeBackend;
using testing::RawConnection;
using testing::Script;

class RequestPathTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions o = {}) {
    o.port = 0;
    o.log_requests = true;
    o.log_sink = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.push_back(line);
    };
    server_ = std::make_unique<HttpServer>(&backend_, o);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  httplib::Client Client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(10, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }
  httplib::Result Post(const std::string& path, const json& body, const char* type = "application/json") {
    return Client().Post(path.c_str(), body.dump(), type);
  }
  // The log once it has at least `lines` lines (a line may be written just
  // after its response was sent), or after 3 s.
  std::vector<std::string> Log(size_t lines = 0) {
    Clock::time_point end = Clock::now() + std::chrono::seconds(3);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(log_mu_);
        if (log_.size() >= lines || Clock::now() >= end) return log_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::string Metrics() { return Client().Get("/metrics")->body; }

  static json Chat() { return {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}; }

  FakeBackend backend_;
  std::unique_ptr<HttpServer> server_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

// 17.1: a failure after admission (here an exception from the backend, as a
// tool schema once raised in the grammar compiler) must give the place back.
TEST_F(RequestPathTest, AnExceptionAfterAdmissionReleasesItsPlace) {
  backend_.SetResponder([](const ApiRequest& r) -> std::optional<Script> {
    if (r.tool_choice == ToolChoice::kRequired) throw std::runtime_error("schema walk failed");
    return std::nullopt;
  });
  ServerOptions o;
  o.max_in_flight = 4;
  StartServer(o);
  json bad = Chat();
  bad["tools"] = json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}});
  bad["tool_choice"] = "required";
  for (int i = 0; i < 100; ++i) {
    auto res = Post("/v1/chat/completions", bad);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 500) << i << ": " << res->body;
    ASSERT_EQ(json::parse(res->body)["error"]["type"], "server_error");
  }
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(Client().Get("/health")->status, 200);
  std::vector<std::string> log = Log(101);
  std::string m = Metrics();
  EXPECT_NE(m.find("lineage_requests_in_flight 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("lineage_requests_total{endpoint=\"/v1/chat/completions\",code=\"500\"} 100\n"), std::string::npos) << m;
  int error_lines = 0;
  for (const std::string& line : log)
    if (line.find("POST /v1/chat/completions 500") != std::string::npos) ++error_lines;
  EXPECT_EQ(error_lines, 100);
}

// 13.6: every request, whatever its route and status, has one log line with
// method, path, status and time, and a count by route and status.
TEST_F(RequestPathTest, EveryRequestIsLoggedAndCounted) {
  ServerOptions o;
  o.api_key = "k";
  StartServer(o);
  httplib::Headers key = {{"x-api-key", "k"}};
  auto c = Client();
  EXPECT_EQ(c.Get("/nope", key)->status, 404);
  EXPECT_EQ(c.Get("/v1/models")->status, 401);
  EXPECT_EQ(c.Head("/", key)->status, 200);
  EXPECT_EQ(c.Get("/v1/models", key)->status, 200);
  EXPECT_EQ(c.Post("/v1/messages/count_tokens", key, R"({"messages":[{"role":"user","content":"x"}]})",
                   "application/json")->status,
            400);  // the fake backend cannot count
  EXPECT_EQ(c.Post("/v1/chat/completions", key, "{", "application/json")->status, 400);
  EXPECT_EQ(c.Post("/v1/chat/completions", key, Chat().dump(), "application/json")->status, 200);
  std::vector<std::string> log = Log(7);
  ASSERT_EQ(log.size(), 7u) << ::testing::PrintToString(log);
  const char* expected[] = {"GET /nope 404",      "GET /v1/models 401",
                            "HEAD / 200",         "GET /v1/models 200",
                            "POST /v1/messages/count_tokens 400", "POST /v1/chat/completions 400",
                            "POST /v1/chat/completions 200"};
  for (const char* e : expected) {
    int found = 0;
    for (const std::string& line : log) {
      if (line.find(std::string(" ") + e) == std::string::npos) continue;
      ++found;
      EXPECT_NE(line.find("_ms="), std::string::npos) << line;
      if (std::string(e).find(" 400") != std::string::npos) {
        EXPECT_NE(line.find("error="), std::string::npos) << line;
      }
    }
    EXPECT_EQ(found, 1) << e << "\n" << ::testing::PrintToString(log);
  }
  std::string m = c.Get("/metrics", key)->body;
  for (const char* line : {"{endpoint=\"other\",code=\"404\"} 1\n", "{endpoint=\"/\",code=\"200\"} 1\n", "{endpoint=\"/v1/models\",code=\"401\"} 1\n",
                           "{endpoint=\"/v1/models\",code=\"200\"} 1\n",
                           "{endpoint=\"/v1/messages/count_tokens\",code=\"400\"} 1\n",
                           "{endpoint=\"/v1/chat/completions\",code=\"400\"} 1\n",
                           "{endpoint=\"/v1/chat/completions\",code=\"200\"} 1\n"})
    EXPECT_NE(m.find(std::string("lineage_requests_total") + line), std::string::npos) << line << "\n" << m;
}

// 15.1: JSON nested 100,000 levels deep, in each place a request carries
// JSON, is a 400 naming the limit, and the server goes on.
TEST_F(RequestPathTest, DeepJsonIsRejectedWhileParsing) {
  StartServer();
  constexpr int kLevels = 100000;
  std::string deep = std::string(kLevels, '[') + std::string(kLevels, ']');
  std::string deep_object;
  for (int i = 0; i < kLevels; ++i) deep_object += "{\"a\":";
  deep_object += "1" + std::string(kLevels, '}');
  struct Case {
    const char* path;
    std::string body;
  } cases[] = {
      {"/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":)" +
           deep_object + "}}]}"},
      {"/v1/messages", R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":)" +
                           deep_object + "}]}"},
      {"/v1/messages", R"({"max_tokens":5,"messages":[{"role":"user","content":)" + deep + "}]}"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":)" + deep + "}]}"},
  };
  for (const Case& c : cases) {
    auto res = Client().Post(c.path, c.body, "application/json");
    ASSERT_TRUE(res) << c.path;
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(res->body.find("deeper than 128 levels"), std::string::npos) << res->body;
  }
  EXPECT_EQ(Post("/v1/chat/completions", Chat())->status, 200);
}

// 17.6: `curl -d` sends JSON labelled as a form; above 8 KiB it is read like
// any JSON body.
TEST_F(RequestPathTest, FormEncodedJsonOver8KiBIsAccepted) {
  StartServer();
  json body = Chat();
  body["messages"][0]["content"] = std::string(20000, 'x');
  auto res = Post("/v1/chat/completions", body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  ASSERT_FALSE(backend_.requests().empty());
  EXPECT_EQ(backend_.requests().back().messages[0]["content"].get<std::string>().size(), 20000u);
}

// 17.6: a chunked body over the limit is a 413, as a declared one is.
TEST_F(RequestPathTest, ChunkedBodyOverTheLimitIs413) {
  ServerOptions o;
  o.max_body_bytes = 4096;
  StartServer(o);
  std::string big = Chat().dump();
  big.insert(big.size() - 1, ",\"pad\":\"" + std::string(10000, 'x') + "\"");
  auto res = Client().Post(
      "/v1/chat/completions",
      [&](size_t offset, httplib::DataSink& sink) {
        size_t n = std::min<size_t>(1000, big.size() - offset);
        sink.write(big.data() + offset, n);
        if (offset + n == big.size()) sink.done();
        return true;
      },
      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413) << res->body;
  EXPECT_EQ(Post("/v1/chat/completions", Chat())->status, 200);
}

// 17.6: fields the server does not compute are refused, not ignored, and a
// huge max_tokens is never echoed as a negative number.
TEST_F(RequestPathTest, BadLogprobsAndHugeMaxTokensAre400) {
  StartServer();
  for (json bad : {json{{"logprobs", true}, {"top_logprobs", 21}}, json{{"top_logprobs", 3}}, json{{"logprobs", 1}}}) {
    json b = Chat();
    for (auto& [k, v] : bad.items()) b[k] = v;
    auto res = Post("/v1/chat/completions", b);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad.dump();
    EXPECT_NE(res->body.find("logprobs"), std::string::npos) << res->body;
  }
  json b = Chat();
  b["logprobs"] = false;
  EXPECT_EQ(Post("/v1/chat/completions", b)->status, 200);
  for (const char* path : {"/v1/chat/completions", "/v1/messages"}) {
    std::string body = R"({"messages":[{"role":"user","content":"x"}],"max_tokens":9223372036854775808})";
    auto res = Client().Post(path, body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(res->body.find("9223372036854775808"), std::string::npos) << res->body;
    EXPECT_EQ(res->body.find("-9223372036854775808"), std::string::npos) << res->body;
  }
}

// 15.3: slow clients lose their own connections, within the deadlines, and
// never delay /health or a normal request.
TEST_F(RequestPathTest, SlowClientsAreCutOffAndDoNotStallTheServer) {
  ServerOptions o;
  o.header_timeout = std::chrono::milliseconds(400);
  o.body_timeout = std::chrono::milliseconds(400);
  o.http_threads = 10;
  o.max_connections = 6;
  StartServer(o);
  // Four connections trickle headers, two trickle a body: all workers but
  // a few are held.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 6; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(slow.back()->connected());
    if (i < 4) {
      ASSERT_TRUE(slow.back()->Send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"));
    } else {
      ASSERT_TRUE(slow.back()->Send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                    "Content-Length: 1000\r\n\r\n{\"mess"));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Clock::time_point t0 = Clock::now();
  auto h = Client().Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  // Past the cap: anything but /health is refused at once.
  auto refused = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  // Keep trickling: the deadlines count from the first byte, not the last.
  for (int step = 0; step < 3; ++step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int i = 0; i < 4; ++i) slow[i]->Send("X");
  }
  for (int i = 0; i < 6; ++i) {
    std::string got = slow[i]->ReadAll();  // returns when the server closes
    EXPECT_NE(got.find(" 408 "), std::string::npos) << got;
    EXPECT_NE(got.find(i < 4 ? "request headers not received" : "request body not received"), std::string::npos)
        << got;
  }
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(4));
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// 15.3: one client address cannot take every connection.
TEST_F(RequestPathTest, ConnectionsPerClientAreCapped) {
  ServerOptions o;
  o.http_threads = 10;
  o.max_connections = 6;
  o.max_connections_per_client = 2;
  o.header_timeout = std::chrono::milliseconds(1000);
  StartServer(o);
  RawConnection a(server_->port()), b(server_->port());
  ASSERT_TRUE(a.Send("GET /v1/models HTTP/1.1\r\n"));
  ASSERT_TRUE(b.Send("GET /v1/models HTTP/1.1\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto res = Client().Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(Client().Get("/health")->status, 200);
}

// 34.7: idle connections hold no worker. A burst of connections that send
// nothing (and keep-alive connections gone quiet) waits in the waiting room:
// /health and a chat request on a new connection are answered at once, not
// after the idle ones time out, and idle connections do not count against
// the caps.
TEST_F(RequestPathTest, IdleConnectionsHoldNoWorkerAndCountAgainstNoCap) {
  ServerOptions o;
  o.http_threads = 10;
  o.max_connections = 2;
  o.max_idle_connections = 400;
  StartServer(o);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(idle.back()->connected()) << i;
  }
  // Two keep-alive connections that served a request and went quiet.
  httplib::Client a = Client(), b = Client();
  a.set_keep_alive(true);
  b.set_keep_alive(true);
  ASSERT_EQ(a.Get("/v1/models")->status, 200);
  ASSERT_EQ(b.Get("/v1/models")->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Clock::time_point t0 = Clock::now();
  auto h = Client().Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto res = Post("/v1/chat/completions", Chat());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2)) << "a worker waited on an idle connection";
  std::string metrics = Metrics();
  EXPECT_NE(metrics.find("lineage_connections_idle 20"), std::string::npos) << "about 202 idle: " << metrics;
  // An idle connection is served when it speaks, and so are the quiet keep-alive ones.
  ASSERT_TRUE(idle[0]->Send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_NE(idle[0]->ReadAll().find("HTTP/1.1 200"), std::string::npos);
  EXPECT_EQ(a.Get("/v1/models")->status, 200);
  EXPECT_EQ(b.Get("/v1/models")->status, 200);
}

// Past max_idle_connections the connection that waited longest is closed.
TEST_F(RequestPathTest, APastCapacityIdleConnectionIsClosedOldestFirst) {
  ServerOptions o;
  o.http_threads = 6;
  o.max_idle_connections = 4;
  StartServer(o);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(idle.back()->connected());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // in order of arrival
  }
  Clock::time_point t0 = Clock::now();
  EXPECT_EQ(idle[0]->ReadAll(), "") << "closed without a byte";
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2)) << "closed for the room, not the idle timeout";
  ASSERT_TRUE(idle[7]->Send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_NE(idle[7]->ReadAll().find("HTTP/1.1 200"), std::string::npos);
}

}  // namespace
}  // namespace lineage::server
