// A trace log on a disk that fills up: the log stops with its reason and the
// server goes on answering every request.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_stack.h"
#include "full_disk_env.h"
#include "trace/trace_io.h"
#include "trace/trace_log.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

TEST(TraceLogFaults, AFullDiskStopsTheLogNotTheServer) {
  const auto dir = std::filesystem::temp_directory_path() / ("lineage_trace_fault_" + std::to_string(::getpid()));
  const std::string model = testing::WriteTinyQwen35(dir);
  const std::string path = (dir / "trace.jsonl").string();
  lineage::testing::FullDiskEnv env(/*budget=*/400);  // the header and about one request
  auto log = trace::TraceLog::Open(path, trace::TraceSegmenter::kDefaultMemoryTokens, &env);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EngineBackendOptions bo;
  bo.engine.num_threads = 2;
  bo.scheduler.trace_log = log->get();
  auto s = testing::StartStack(model, bo);
  json messages = json::array({{{"role", "user"}, {"content", "Hello there."}}});
  for (int i = 0; i < 4; ++i) {
    messages.push_back({{"role", "user"}, {"content", "Turn " + std::to_string(i) + "."}});
    json r = testing::PostJson(*s, "/v1/chat/completions",
                               {{"messages", messages}, {"max_tokens", 3}, {"temperature", 0}});
    EXPECT_EQ(r["object"], "chat.completion") << r.dump();
  }
  s.reset();
  EXPECT_EQ((*log)->status().code(), StatusCode::kResourceExhausted) << (*log)->status().ToString();
  log->reset();
  auto trace = trace::ReadTrace(path);  // what was written before the disk filled
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  if (trace.ok()) {
    EXPECT_LT(trace->requests.size(), 4u);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lineage::server
