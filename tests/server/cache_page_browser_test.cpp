// The cache page as a person sees it, in Debian's chromium driven by
// puppeteer-core (tests/server/e2e/cache_page.mjs): a server on the tiny
// model with an API key and a disk tier, a scripted session with a
// regenerate and a sub-agent, then the page's tree, request rows, budget bar,
// live updates, an in-flight prefill and a phone-width window. Screenshots go
// to the build tree (cache-page.png, cache-page-phone.png). Skipped, saying
// why, without chromium or npm.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_stack.h"
#include "node_clients.h"

namespace lineage::server {
namespace {

TEST(CachePageBrowser, ShowsTheLineagesRequestsAndBudgetsAndUpdatesLive) {
  std::string out;
  if (testing::RunShell("command -v chromium", &out) != 0) GTEST_SKIP() << "chromium is not installed (scripts/setup installs it)";
  std::string why;
  const std::string node_dir = testing::PrepareNodeClients(&why);
  if (node_dir.empty()) GTEST_SKIP() << why;

  const auto dir = std::filesystem::temp_directory_path() / ("lineage_cache_page_browser_" + std::to_string(::getpid()));
  const std::string model = testing::WriteTinyQwen35(dir);
  EngineBackendOptions bo;
  bo.engine.num_threads = 2;
  bo.scheduler.prefill_chunk_tokens = 32;  // a long prefill in many steps: the page sees it in flight
  bo.cache_dir = (dir / "cache").string();
  ServerOptions so;
  so.api_key = "browser-key";
  auto s = testing::StartStack(model, bo, so);
  const std::string shots = (std::filesystem::path(LINEAGE_BINARY).parent_path() / "cache-page").string();
  out.clear();
  const int rc = testing::RunShell("cd '" + node_dir + "' && timeout 240 node cache_page.mjs http://127.0.0.1:" +
                                       std::to_string(s->http->port()) + " browser-key '" + shots + "'",
                                   &out);
  s.reset();
  std::filesystem::remove_all(dir);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok lineages="), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(shots + ".png"));
}

}  // namespace
}  // namespace lineage::server
