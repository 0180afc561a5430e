// Binding: a port another server listens on is refused with a clear error
// (no SO_REUSEPORT sharing), and ports outside 0..65535 are refused.
#include <gtest/gtest.h>

#include "fake_backend.h"
#include "server/http_server.h"

namespace lineage::server {
namespace {

TEST(Bind, ABusyPortIsAnErrorNamingTheCause) {
  testing::FakeBackend backend;
  ServerOptions o;
  o.port = 0;
  o.log_requests = false;
  HttpServer first(&backend, o);
  ASSERT_TRUE(first.Start().ok());
  o.port = first.port();
  HttpServer second(&backend, o);
  Status st = second.Bind();
  ASSERT_FALSE(st.ok()) << "a second server bound busy port " << o.port;
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find(std::to_string(o.port)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("in use"), std::string::npos) << st.message();
  first.Stop();
}

TEST(Bind, PortsOutOfRangeAreRefused) {
  testing::FakeBackend backend;
  for (int port : {99999, 65536, -1}) {
    ServerOptions o;
    o.port = port;
    HttpServer http(&backend, o);
    Status st = http.Bind();
    ASSERT_FALSE(st.ok()) << port;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("out of range"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace lineage::server
