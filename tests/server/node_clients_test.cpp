// The official client libraries (npm `openai` and `@anthropic-ai/sdk`) talk
// to the server without error: streaming, tool calls, usage, typed errors.
// The packages are installed with the machine's npm into the build tree the
// first time (tests/server/e2e/package.json); without npm or the registry the
// test is skipped with the reason.
#include <gtest/gtest.h>


#include "fake_backend.h"
#include "node_clients.h"
#include "server/http_server.h"

namespace lineage::server {
namespace {

const std::string kXmlCall =
    "<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n</function>\n</tool_call>";

TEST(NodeClients, OfficialLibrariesWorkAgainstTheServer) {
  std::string why;
  std::string dir = testing::PrepareNodeClients(&why);
  if (dir.empty()) GTEST_SKIP() << why;
  testing::FakeBackend backend;
  backend.SetResponder([](const ApiRequest& r) -> std::optional<testing::Script> {
    if (r.tools.empty()) return std::nullopt;  // the default "Hello, world"
    return testing::Script({"I will read it.\n\n<tool_", "call>\n<function=read_file>\n", kXmlCall.substr(33)});
  });
  ServerOptions o;
  o.port = 0;
  o.log_requests = false;
  HttpServer http(&backend, o);
  ASSERT_TRUE(http.Start().ok());
  std::string out;
  int rc = testing::RunShell("cd '" + dir + "' && timeout 120 node client.mjs http://127.0.0.1:" + std::to_string(http.port()) + " fake",
               &out);
  http.Stop();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
}

}  // namespace
}  // namespace lineage::server
