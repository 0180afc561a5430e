// HTTP framing: the strict head parser and chunked decoder on their own, then
// at the socket, where every refused framing is answered once and the
// connection closed, so that no byte after it is ever served as a request.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "fake_backend.h"
#include "http_test_util.h"
#include "server/http/http_framing.h"
#include "server/http_server.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;
using testing::FakeBackend;
using testing::RawConnection;
using testing::Script;

int StatusOf(std::string_view head) {
  RequestHead h;
  return ParseRequestHead(head, &h).status;
}

TEST(HttpFraming, HeadsAreCheckedStrictly) {
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
  EXPECT_EQ(StatusOf("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0);  // an empty line before is skipped
  EXPECT_EQ(StatusOf("GET / HTTP/1.0\r\n\r\n"), 0);                 // HTTP/1.0 needs no Host
  EXPECT_EQ(StatusOf("get / HTTP/1.1\r\nHost: x\r\n\r\n"), 501);
  EXPECT_EQ(StatusOf("BREW / HTTP/1.1\r\nHost: x\r\n\r\n"), 501);
  EXPECT_EQ(StatusOf("GET / HTTP/1.2\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1 \r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf(std::string("GET /\0x HTTP/1.1\r\nHost: x\r\n\r\n", 30)), 400);
  EXPECT_EQ(StatusOf("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET x HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\nHost: x\r\n\r\n"), 400);  // a bare LF
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\n\r\n"), 400);           // no Host
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 0);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  EXPECT_EQ(StatusOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), 501);
  EXPECT_EQ(StatusOf("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf(std::string("GET / HTTP/1.1\r\nHost: x\r\nx-api-key: k\0junk\r\n\r\n", 44)), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n"), 417);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(9000, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(StatusOf("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"), 414);

  RequestHead h;
  ASSERT_FALSE(ParseRequestHead("POST /v1/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n"
                                "Expect: 100-continue\r\nX-A: 1\r\n\r\n", &h).failed());
  EXPECT_TRUE(h.chunked);
  EXPECT_TRUE(h.expects_continue);
  EXPECT_EQ(HeadWithLength(h, 12), "POST /v1/x HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nContent-Length: 12\r\n\r\n");
}

// The body, or the status it was refused with.
std::string Decode(std::string_view in, uint64_t max = 1000, size_t* used = nullptr) {
  ChunkedDecoder d(max);
  size_t n = 0;
  for (char c : in) {  // a byte at a time: every state boundary is crossed mid-buffer
    if (d.done() || d.error().failed()) break;
    n += d.Feed(std::string_view(&c, 1));
  }
  if (used) *used = n;
  if (d.error().failed()) return std::to_string(d.error().status);
  return d.done() ? d.body() : "incomplete";
}

TEST(HttpFraming, ChunkedBodiesAreDecodedStrictly) {
  size_t used = 0;
  EXPECT_EQ(Decode("3\r\nabc\r\n0\r\n\r\nGET", 1000, &used), "abc");
  EXPECT_EQ(used, 13u);  // the next request is left alone
  EXPECT_EQ(Decode("A;ext=1\r\n0123456789\r\n2\r\nab\r\n0\r\nTrailer: x\r\n\r\n"), "0123456789ab");
  EXPECT_EQ(Decode("3\r\nabcXX0\r\n\r\n"), "400");  // data without its CRLF
  EXPECT_EQ(Decode("3\nabc\r\n0\r\n\r\n"), "400");
  EXPECT_EQ(Decode("x\r\n"), "400");
  EXPECT_EQ(Decode(" 3\r\nabc\r\n0\r\n\r\n"), "400");
  EXPECT_EQ(Decode("0\r\nbad trailer\r\n\r\n"), "400");
  EXPECT_EQ(Decode("0\r\n\r\r"), "400");
  EXPECT_EQ(Decode("3e9\r\n", 1000), "413");
  EXPECT_EQ(Decode("fffffffffffffffffff\r\n", 1000), "413");
  EXPECT_EQ(Decode("200\r\n" + std::string(512, 'a') + "\r\n200\r\n" + std::string(512, 'a') + "\r\n0\r\n\r\n", 1000), "413");
  EXPECT_EQ(Decode("3\r\nab"), "incomplete");
  ChunkedDecoder whole(100);
  std::string in = "3\r\nabc\r\n0\r\n\r\nrest";
  EXPECT_EQ(whole.Feed(in), in.size() - 4);
  EXPECT_TRUE(whole.done());
}

class HttpFramingSocketTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions o = {}) {
    o.port = 0;
    server_ = std::make_unique<HttpServer>(&backend_, o);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  // Sends `bytes` on a fresh connection and returns all the server wrote
  // before it closed.
  std::string Exchange(const std::string& bytes, bool half_close = false) {
    RawConnection c(server_->port());
    EXPECT_TRUE(c.connected());
    EXPECT_TRUE(c.Send(bytes));
    if (half_close) c.HalfClose();
    return c.ReadAll();
  }
  static int Responses(const std::string& out) {
    int n = 0;
    for (size_t p = out.find("HTTP/1.1 "); p != std::string::npos; p = out.find("HTTP/1.1 ", p + 1))
      if (out.compare(p + 9, 3, "100") != 0) ++n;
    return n;
  }
  static std::string Chat() { return R"({"model":"m","messages":[{"role":"user","content":"hi"}]})"; }

  FakeBackend backend_;
  std::unique_ptr<HttpServer> server_;
};

// Each refused framing, followed by a request that must never be served.
TEST_F(HttpFramingSocketTest, ARefusedRequestIsAnsweredOnceAndTheConnectionCloses) {
  StartServer();
  const std::string smuggled = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  struct Case {
    std::string bytes;
    const char* status;
  } cases[] = {
      {"get / HTTP/1.1\r\nContent-Length: 41\r\n\r\n", " 501 "},
      {"GET / HTTP/1.2\r\nHost: x\r\n\r\n", " 505 "},
      {std::string("GET /\0 HTTP/1.1\r\nHost: x\r\n\r\n", 29), " 400 "},
      {"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", " 400 "},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}", " 400 "},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length : 2\r\n\r\n{}", " 400 "},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\nTransfer-Encoding: chunked\r\n\r\n"
       "2\r\n{}\r\n0\r\n\r\n",
       " 400 "},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n", " 400 "},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", " 501 "},
      {"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n", " 431 "},
  };
  for (const Case& c : cases) {
    std::string out = Exchange(c.bytes + smuggled);
    EXPECT_EQ(Responses(out), 1) << c.bytes.substr(0, 120) << "\n->\n" << out;
    EXPECT_NE(out.find(c.status), std::string::npos) << c.bytes.substr(0, 120) << "\n->\n" << out.substr(0, 300);
    EXPECT_NE(out.find("Connection: close"), std::string::npos) << out.substr(0, 300);
    EXPECT_EQ(out.find("\"status\":\"ok\""), std::string::npos) << out;
  }
  // The server goes on.
  httplib::Client client("127.0.0.1", server_->port());
  EXPECT_EQ(client.Get("/health")->status, 200);
}

TEST_F(HttpFramingSocketTest, ValidChunkedAndPipelinedRequestsAreServed) {
  StartServer();
  std::string body = Chat();
  std::string chunked = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n";
  for (size_t i = 0; i < body.size(); i += 7) {
    std::string part = body.substr(i, 7);
    char size[16];
    std::snprintf(size, sizeof size, "%zx", part.size());
    chunked += std::string(size) + ";note=1\r\n" + part + "\r\n";
  }
  chunked += "0\r\nX-Trailer: 1\r\n\r\n";
  std::string plain = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  std::string out = Exchange(chunked + plain);
  EXPECT_EQ(Responses(out), 2) << out;
  EXPECT_EQ(out.find(" 400 "), std::string::npos) << out;
  size_t first = out.find("HTTP/1.1 200"), second = out.find("HTTP/1.1 200", first + 1);
  EXPECT_NE(first, std::string::npos) << out;
  EXPECT_NE(second, std::string::npos) << out;
  // A chunked body behind Expect: 100-continue gets its 100 first.
  std::string expect = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                       "Expect: 100-continue\r\nConnection: close\r\n\r\n";
  RawConnection c(server_->port());
  ASSERT_TRUE(c.Send(expect));
  char buf[64] = {};
  ssize_t n = ::recv(c.fd(), buf, sizeof buf - 1, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  char size[16];
  std::snprintf(size, sizeof size, "%zx", body.size());
  ASSERT_TRUE(c.Send(std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n"));
  EXPECT_NE(c.ReadAll().find("HTTP/1.1 200"), std::string::npos);
}

// A NUL cannot cut an API key short: the header is refused before the check.
TEST_F(HttpFramingSocketTest, AKeyWithANulIsRefused) {
  ServerOptions o;
  o.api_key = "KEY";
  StartServer(o);
  std::string good = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-api-key: KEY\r\nContent-Length: " +
                     std::to_string(Chat().size()) + "\r\nConnection: close\r\n\r\n" + Chat();
  EXPECT_NE(Exchange(good).find("HTTP/1.1 200"), std::string::npos);
  std::string nul = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-api-key: KEY" + std::string(1, '\0') +
                    "junk\r\nContent-Length: " + std::to_string(Chat().size()) + "\r\n\r\n" + Chat();
  std::string out = Exchange(nul);
  EXPECT_NE(out.find("HTTP/1.1 400"), std::string::npos) << out;
  EXPECT_EQ(out.find("HTTP/1.1 200"), std::string::npos) << out;
}

// A client that half-closes after a non-streaming request: its generation is
// cancelled as for a closed client, and the connection ends without a
// response, never with a 200 without the reply.
TEST_F(HttpFramingSocketTest, HalfCloseNeverGetsAnEmptySuccess) {
  Script slow;
  for (int i = 0; i < 60; ++i) slow.pieces.push_back("tok ");
  slow.delay = std::chrono::milliseconds(20);
  backend_.Queue(slow);
  StartServer();
  std::string req = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(Chat().size()) +
                    "\r\n\r\n" + Chat();
  std::string out = Exchange(req, /*half_close=*/true);
  EXPECT_EQ(out, "");
  for (int i = 0; i < 100 && backend_.cancelled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(backend_.cancelled(), 1);
  // A quick reply that is ready before the first look at the socket arrives whole.
  backend_.Queue(Script({"fast"}));
  out = Exchange(req, /*half_close=*/true);
  EXPECT_NE(out.find("HTTP/1.1 200"), std::string::npos) << out;
  EXPECT_NE(out.find("fast"), std::string::npos) << out;
}

}  // namespace
}  // namespace lineage::server
