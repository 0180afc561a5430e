// The official client libraries (npm `openai` and `@anthropic-ai/sdk`) talk
// to the server without error: streaming, tool calls, usage, typed errors;
// the `openai` client's Responses API too.
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

// Runs tests/server/e2e/SCRIPT in fake mode against a server on `backend`
// that answers with a read_file call when tools are offered; the script's
// exit code and output.
int RunScript(const std::string& script, testing::FakeBackend& backend, std::string* out) {
  std::string why;
  std::string dir = testing::PrepareNodeClients(&why);
  if (dir.empty()) {
    *out = why;
    return -2;
  }
  backend.SetResponder([](const ApiRequest& r) -> std::optional<testing::Script> {
    if (r.tools.empty()) return std::nullopt;  // the default "Hello, world"
    return testing::Script({"I will read it.\n\n<tool_", "call>\n<function=read_file>\n", kXmlCall.substr(33)});
  });
  ServerOptions o;
  o.port = 0;
  o.log_requests = false;
  HttpServer http(&backend, o);
  if (!http.Start().ok()) return -1;
  int rc = testing::RunShell(
      "cd '" + dir + "' && timeout 120 node " + script + " http://127.0.0.1:" + std::to_string(http.port()) + " fake", out);
  http.Stop();
  return rc;
}

TEST(NodeClients, OfficialLibrariesWorkAgainstTheServer) {
  testing::FakeBackend backend;
  std::string out;
  int rc = RunScript("client.mjs", backend, &out);
  if (rc == -2) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
}

TEST(NodeClients, OpenAiResponsesApiWorksAgainstTheServer) {
  testing::FakeBackend backend;
  std::string out;
  int rc = RunScript("responses.mjs", backend, &out);
  if (rc == -2) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
  // Every request reached the backend as a Responses request, the
  // instructions and the developer message as system messages.
  auto requests = backend.requests();
  ASSERT_GE(requests.size(), 4u);
  EXPECT_EQ(requests[0].api, ApiKind::kOpenAiResponses);
  EXPECT_EQ(requests[0].messages[0]["role"], "system");
  EXPECT_EQ(requests[0].messages[1]["role"], "system");
  EXPECT_EQ(requests[0].sampling.max_tokens, 8);
}

}  // namespace
}  // namespace lineage::server
