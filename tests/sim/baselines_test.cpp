// Behaviours particular to one baseline, each derived by hand from the
// policy's rules in docs/policies.md.
#include <gtest/gtest.h>

#include "sim/policies/llama_server.h"

#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/sim_test_util.h"

namespace lineage::sim {
namespace {

constexpr int64_t kHourMs = 3600LL * 1000;

using testing::MakeRequest;

std::vector<int64_t> Restores(const std::string& policy, const std::string& shape_name, std::vector<Request> reqs) {
  Trace t;
  t.sessions = {"s"};
  t.requests = std::move(reqs);
  ModelShape shape = FindShape(shape_name).value();
  auto p = MakePolicy(policy, shape, {shape.ram_budget_bytes, shape.disk_budget_bytes}).value();
  return Replay(t, shape, *p).value().restore_tokens;
}

const Segment kSys{1, 1000, Role::kSystem};
const Segment kT1{2, 2000, Role::kUser}, kT2{3, 2000, Role::kUser}, kT3{4, 500, Role::kUser}, kNew{5, 300, Role::kUser};

TEST(LlamaServer, ChunkReuseRecoversTheTailAfterAHeadDropOnAttentionOnly) {
  Trace t;
  t.sessions = {"s"};
  t.requests = {MakeRequest(0, {kSys, kT1, kT2, kT3}, 9), MakeRequest(kHourMs, {kSys, kT2, kT3, kNew}, 10)};
  ModelShape shape = FindShape("qwen3-0.6b").value();
  for (int64_t reuse : {0, 256}) {
    LlamaServerPolicy p(shape, {shape.ram_budget_bytes, 0});
    p.cache_reuse_tokens = reuse;  // --cache-reuse 256; off by default
    auto r = Replay(t, shape, p).value().restore_tokens;
    // The common prefix, then with reuse t2 + t3 shifted into place.
    EXPECT_EQ(r[1], reuse > 0 ? 1000 + 2000 + 500 : 1000) << reuse;
  }
}

TEST(LlamaServer, HybridRestoresTheCheckpointAtTheFirstUserMessage) {
  auto r = Restores("llama-server", "glm-5.3-flash",
                    {MakeRequest(0, {kSys, kT1, kT2, kT3}, 9), MakeRequest(kHourMs, {kSys, kT2, kT3, kNew}, 10)});
  EXPECT_EQ(r[1], 1000);
}

TEST(Periodic, ThinningKeepsTheLaterCheckpoints) {
  // A 10,000-token cold prefill checkpoints at 2048, 4096, 6144, 8192 and the
  // end; thinning to 4 drops the first of the equal smallest gaps: 2048.
  Segment body{7, 9000, Role::kUser};
  auto r = Restores("periodic", "glm-5.3-flash",
                    {MakeRequest(0, {kSys, body}, 9), MakeRequest(kHourMs, {kSys, {7, 2000}, {8, 100}}, 10),
                     MakeRequest(2 * kHourMs, {kSys, {7, 4000}, {8, 100}}, 11)});
  EXPECT_EQ(r[1], 0);
  EXPECT_EQ(r[2], 4096);
}

TEST(Marconi, BranchPointGetsAStateWhenASecondSequenceLeavesThere) {
  auto r = Restores("marconi", "glm-5.3-flash",
                    {MakeRequest(0, {kSys, kT1}, 9, 10), MakeRequest(kHourMs, {kSys, kT2}, 10, 10),
                     MakeRequest(2 * kHourMs, {kSys, kT3}, 11, 10)});
  EXPECT_EQ(r[1], 0);     // nothing stored at 1000 yet
  EXPECT_EQ(r[2], 1000);  // the second request created the branch point at 1000
}

}  // namespace
}  // namespace lineage::sim
