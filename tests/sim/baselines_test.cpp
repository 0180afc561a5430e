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

std::vector<int64_t> Restores(const std::string& policy, const std::string& shape_name, std::vector<Request> reqs,
                              bool disk = true) {
  Trace t;
  t.sessions = {"s"};
  t.requests = std::move(reqs);
  ModelShape shape = FindShape(shape_name).value();
  auto p = MakePolicy(policy, shape, {shape.ram_budget_bytes, disk ? shape.disk_budget_bytes : 0}).value();
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

// A chat turn whose prompt ends in a generation prompt {9, 5} after
// `history` tokens; the next turn renders the reply as segment 11, not as the
// output 10 (a thinking template), so only the message boundary is a prefix.
Request Turn(int64_t t_ms, std::vector<Segment> history, uint64_t out_id) {
  std::vector<Segment> prompt = history;
  prompt.push_back({9, 5, Role::kAssistant});
  Request r = MakeRequest(t_ms, prompt, out_id, 50);
  r.history_end_tokens = NumTokens(history);
  return r;
}

TEST(RapidMlx, HybridRestoresTheMessageBoundaryNotThePromptEnd) {
  const Segment reply{11, 60, Role::kAssistant};
  auto r = Restores("rapid-mlx", "glm-5.3-flash",
                    {Turn(0, {kSys, kT1}, 10), Turn(kHourMs, {kSys, kT1, reply, kT3}, 12),
                     Turn(2 * kHourMs, {kSys, kT1, reply, kT3}, 13)});
  EXPECT_EQ(r[1], 3000);  // the boundary snapshot: the prompt and prompt + reply entries are not prefixes
  EXPECT_EQ(r[2], 3560);  // an exact resend: the prompt-end entry cannot be trimmed, the boundary restores
}

TEST(RapidMlx, KeepsAtMostEightHybridEntries) {
  // Each turn stores three entries (boundary, prompt, prompt + reply): after
  // three other sessions the first one's boundary has left.
  const Segment reply{11, 60, Role::kAssistant};
  for (int others : {1, 2}) {
    std::vector<Request> reqs = {Turn(0, {kSys, kT1}, 10)};
    for (int i = 0; i < others; ++i) reqs.push_back(Turn((i + 1) * kHourMs, {{100u + i, 800}}, 20 + i));
    reqs.push_back(Turn((others + 1) * kHourMs, {kSys, kT1, reply, kT3}, 12));
    auto r = Restores("rapid-mlx", "glm-5.3-flash", reqs);
    EXPECT_EQ(r.back(), others == 1 ? 3000 : 0) << others;
  }
}

TEST(RapidMlx, AttentionOnlyRestoresTheLongestCommonPrefix) {
  auto r = Restores("rapid-mlx", "qwen3-0.6b", {MakeRequest(0, {kSys, kT1}, 9), MakeRequest(kHourMs, {kSys, kT2}, 10)});
  EXPECT_EQ(r[1], 1000);
}

TEST(MlxVlm, KeepsTwoExactSnapshots) {
  // Each cold turn stores its guard (m - 16) and its prompt end: a second
  // session pushes the first one's snapshots out of RAM (no disk tier here).
  for (int others : {0, 1}) {
    std::vector<Request> reqs = {MakeRequest(0, {kSys, kT1}, 10)};
    for (int i = 0; i < others; ++i) reqs.push_back(MakeRequest((i + 1) * kHourMs, {{100u + i, 800}}, 20 + i));
    reqs.push_back(MakeRequest((others + 1) * kHourMs, {kSys, kT1, kT3}, 12));
    auto r = Restores("mlx-vlm", "glm-5.3-flash", reqs, /*disk=*/false);
    EXPECT_EQ(r.back(), others == 0 ? 3000 : 0) << others;
  }
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
