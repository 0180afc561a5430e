// The lineage policy on whole generated traces: defects of issue 12 that
// only show over many requests, each against the oracle on the same trace.
#include <gtest/gtest.h>

#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::sim {
namespace {

double ShareOfOracle(const std::string& policy, const Trace& t, const ModelShape& shape, PolicyOptions o) {
  auto oracle = MakePolicy("oracle", shape, o).value();
  const ReplayResult best = Replay(t, shape, *oracle).value();
  auto p = MakePolicy(policy, shape, o).value();
  const ReplayResult r = Replay(t, shape, *p).value();
  return static_cast<double>(r.cached_tokens) / static_cast<double>(std::max<int64_t>(1, best.cached_tokens));
}

TEST(LineagePolicy, AnchorsNothingRestoresFromDoNotStarveConversations) {
  // Every request of `clock` carries its own anchor (a timestamp in the
  // system prompt). Ranked above conversations by kind alone, they filled
  // the RAM and the policy stopped restoring (0.9% of the oracle). Fixed, it
  // serves 95.8% of what committed prompts hold and 79.8% of the oracle, which
  // also counts prefixes still being prefilled (sessions arriving during a
  // one-minute divergence's re-prefill; in-flight sharing is what wins them).
  const ModelShape shape = FindShape("qwen3.5-0.8b").value();
  const Trace t = GenerateTrace("clock", 1, 800, "qwen3.5-0.8b").value();
  EXPECT_GE(ShareOfOracle("lineage-ram", t, shape, {int64_t{1} << 30, 0}), 0.75);
}

}  // namespace
}  // namespace lineage::sim
