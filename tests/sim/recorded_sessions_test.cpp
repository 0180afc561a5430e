// Real agents' sessions with sub-agents (tests/sim/fixtures/README.md),
// replayed through the lineage policy beside the bound: a sub-agent whose
// tool list was seen before restores what is reachable; the first one of a
// tool list leaves the main agent's prompt inside the tools and restores from
// the anchor's rung below (CacheOptions::anchor_rungs), which without rungs
// it could not.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/policy.h"
#include "sim/replay.h"
#include "trace/trace_io.h"

namespace lineage::sim {
namespace {

struct Replayed {
  Trace trace;
  ReplayResult oracle, lineage;
};

Replayed ReplayFixture(const std::string& name, const std::string& policy = "lineage") {
  Replayed out;
  const std::string path = std::string(LINEAGE_SOURCE_DIR) + "/tests/sim/fixtures/" + name;
  auto t = ReadTrace(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return out;
  out.trace = std::move(t).value();
  ModelShape shape = FindShape("qwen3.5-0.8b").value();
  PolicyOptions options{shape.ram_budget_bytes, shape.disk_budget_bytes};
  auto oracle = MakePolicy("oracle", shape, options).value();
  auto lineage = MakePolicy(policy, shape, options).value();
  out.oracle = Replay(out.trace, shape, *oracle).value();
  out.lineage = Replay(out.trace, shape, *lineage).value();
  return out;
}

class RecordedSession : public ::testing::TestWithParam<const char*> {};

TEST_P(RecordedSession, LaterSubAgentsRestoreWhatIsReachable) {
  Replayed r = ReplayFixture(GetParam());
  const std::vector<Request>& q = r.trace.requests;
  ASSERT_EQ(q.size(), 8u);
  int64_t first_of_a_tool_list = 0, checked = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    const int64_t reachable = r.oracle.restore_tokens[i], got = r.lineage.restore_tokens[i];
    EXPECT_LE(got, reachable) << "request " << i;
    // The tool list (system + tools prefix) seen by an earlier request?
    bool seen = false;
    for (size_t j = 0; j < i; ++j)
      seen |= q[j].anchor_tokens == q[i].anchor_tokens && Lcp(q[i].prompt, q[j].prompt) >= q[i].anchor_tokens;
    if (!seen || q[i].anchor_tokens == 0) {
      first_of_a_tool_list += reachable - got;
      continue;
    }
    ++checked;
    EXPECT_GE(static_cast<double>(got), 0.98 * static_cast<double>(reachable)) << "request " << i;
  }
  EXPECT_GE(checked, 4);
  // Over the session, at least 98 % of the bound; without the rungs the
  // first sub-agent of a tool list restores nothing.
  EXPECT_GE(static_cast<double>(r.lineage.cached_tokens), 0.98 * static_cast<double>(r.oracle.cached_tokens));
  Replayed no_rungs = ReplayFixture(GetParam(), "lineage-no-rungs");
  EXPECT_LT(static_cast<double>(no_rungs.lineage.cached_tokens), 0.95 * static_cast<double>(r.oracle.cached_tokens));
  EXPECT_GT(first_of_a_tool_list, 0);
}

INSTANTIATE_TEST_SUITE_P(Agents, RecordedSession,
                         ::testing::Values("opencode_subagents.jsonl", "claude_code_subagents.jsonl"),
                         [](const auto& info) { return std::string(info.param).substr(0, std::string(info.param).find('_')); });

}  // namespace
}  // namespace lineage::sim
