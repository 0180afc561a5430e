// The peer models as their current code describes them (docs/policies.md):
// each test pins one behaviour the previous model of that peer did not have,
// with expected values derived by hand from the peer's rules.
#include <gtest/gtest.h>

#include "sim/policies/vllm.h"
#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/sim_test_util.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::sim {
namespace {

constexpr int64_t kHourMs = 3600LL * 1000;

using testing::MakeRequest;

ReplayResult RunPolicy(const std::string& policy, const std::string& shape_name, std::vector<Request> reqs) {
  Trace t;
  t.sessions = {"s"};
  t.requests = std::move(reqs);
  ModelShape shape = FindShape(shape_name).value();
  auto p = MakePolicy(policy, shape, {shape.ram_budget_bytes, shape.disk_budget_bytes}).value();
  return Replay(t, shape, *p).value();
}

std::vector<int64_t> Restores(const std::string& policy, const std::string& shape_name, std::vector<Request> reqs) {
  return RunPolicy(policy, shape_name, std::move(reqs)).restore_tokens;
}

const Segment kSys{1, 1000, Role::kSystem};

// vLLM raises the attention block so one page of one layer holds one layer's
// recurrent state, in multiples of 16 tokens:
// qwen3.5-0.8b: 12,288 / 6 = 2,048 B/token per layer; 20,201,472 / 18 =
// 1,122,304 B of state per layer; 1,122,304 / (16 x 2,048) = 34.25 -> 35 x 16.
TEST(Vllm, BlockSizeHoldsOneLayersStateInOnePage) {
  EXPECT_EQ(VllmBlockTokens(FindShape("qwen3.5-0.8b").value()), 560);
  EXPECT_EQ(VllmBlockTokens(FindShape("glm-5.3-flash").value()), 1680);  // 4,205,882 / (16 x 2,513.45) -> 105
  EXPECT_EQ(VllmBlockTokens(FindShape("qwen3-0.6b").value()), 16);       // attention-only: the kernel block
}

TEST(Vllm, RestoresOnlyAtBlockBoundaries) {
  // qwen3.5-0.8b, 560-token blocks. Turn 1: 3,000 + 100 reply tokens = 3,100
  // -> 5 full blocks (2,800). Turn 2 extends it: restores 2,800, not 3,100.
  Segment body{7, 2000, Role::kUser};
  auto r = Restores("vllm", "qwen3.5-0.8b",
                    {MakeRequest(0, {kSys, body}, 9, 100),
                     MakeRequest(kHourMs, {kSys, body, {9, 100, Role::kAssistant}, {8, 50}}, 10)});
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[1], 2800);
  // Turn 1's prefill ran in chunks of 3 blocks (2,048 tokens rounded down
  // to blocks: 1,680) and a last one to its last full block (2,800), and
  // only those steps' ends hold a state. A prompt sharing 1,500 tokens has 2
  // cached blocks and no state on them; one sharing 2,000 restores 1,680.
  auto s = Restores("vllm", "qwen3.5-0.8b",
                    {MakeRequest(0, {kSys, body}, 9, 100), MakeRequest(kHourMs, {kSys, {7, 500}, {8, 50}}, 10)});
  EXPECT_EQ(s[1], 0);
  auto u = Restores("vllm", "qwen3.5-0.8b",
                    {MakeRequest(0, {kSys, body}, 9, 100), MakeRequest(kHourMs, {kSys, {7, 1000}, {8, 50}}, 10)});
  EXPECT_EQ(u[1], 1680);
}

TEST(Vllm, SeesTheBlocksARunningPrefillHasComputed) {
  // qwen3.5-0.8b prefills 60 tokens/s in 256-token turns: 3,000 tokens take
  // 50 s. A request sharing them that arrives at 40 s finds the first chunk's
  // blocks (1,680 tokens, state at the end) already cached.
  Segment body{7, 2000, Role::kUser};
  auto r = Restores("vllm", "qwen3.5-0.8b",
                    {MakeRequest(0, {kSys, body}, 9, 100), MakeRequest(40'000, {kSys, body, {8, 50}}, 10)});
  EXPECT_EQ(r[1], 1680);
}

TEST(Sglang, ChunkedPrefillKeepsTheStateAtEachChunkEnd) {
  // 10,000 tokens prefill in chunks of 4,096: states at 4,096 and 8,192
  // (the request's own state lands in the tree at its end only when it
  // finishes, at 10,100). A prompt sharing 9,000 tokens restores 8,192.
  Segment body{7, 9000, Role::kUser};
  auto r = Restores("sglang", "qwen3.5-0.8b",
                    {MakeRequest(0, {kSys, body}, 9, 100), MakeRequest(kHourMs, {kSys, {7, 8000}, {8, 50}}, 10)});
  EXPECT_EQ(r[1], 8192);
}

TEST(Sglang, RestoresAtARequestEndAndKeepsTheChunkAlignedBranchPoint) {
  // Two prompts part at 1,000 (the system prompt's end): the second's KV
  // match runs past every state, so it keeps the state at 1,000 floored to
  // 64 = 960, which serves a third prompt sharing the system prompt.
  auto r = Restores("sglang", "glm-5.3-flash",
                    {MakeRequest(0, {kSys, {2, 2000}}, 9, 10), MakeRequest(kHourMs, {kSys, {3, 2000}}, 10, 10),
                     MakeRequest(2 * kHourMs, {kSys, {4, 500}}, 11, 10),
                     MakeRequest(3 * kHourMs, {kSys, {2, 2000}, {9, 10, Role::kAssistant}, {5, 40}}, 12, 10)});
  EXPECT_EQ(r[1], 0);     // KV of the system prompt is there, no state at its end
  EXPECT_EQ(r[2], 960);   // the branch point request 1 captured
  EXPECT_EQ(r[3], 3010);  // request 0's end: prompt + reply
}

TEST(Marconi, KeepsABranchPointInsideASegment) {
  // The second prompt leaves the first inside segment 7 (after 2,000 of its
  // 3,000 tokens). On a token tree the branch point is a node and holds a
  // state; a segment trie had no node there and restored nothing.
  auto r = Restores("marconi", "glm-5.3-flash",
                    {MakeRequest(0, {{7, 3000}}, 9, 10), MakeRequest(kHourMs, {{7, 2000}, {8, 100}}, 10, 10),
                     MakeRequest(2 * kHourMs, {{7, 2500}, {6, 100}}, 11, 10)});
  EXPECT_EQ(r[1], 0);
  EXPECT_EQ(r[2], 2000);
}

TEST(LlamaServer, ARequestWaitsForAFreeSlotInsteadOfTakingABusyOne) {
  // Four long requests hold the four slots; a fifth arrives 1 s later with
  // the first one's prompt + reply + a new message. It waits for the first
  // to finish (its slot is then the most similar) and restores all of it; a
  // model that took a busy slot restored nothing.
  const ModelShape shape = FindShape("glm-5.3-flash").value();
  std::vector<Request> reqs;
  for (uint64_t i = 0; i < 4; ++i) reqs.push_back(MakeRequest(0, {kSys, {10 + i, 4000, Role::kUser}}, 20 + i, 200));
  reqs.push_back(MakeRequest(1000, {kSys, {10, 4000, Role::kUser}, {20, 200, Role::kAssistant}, {30, 50}}, 40, 10));
  ReplayResult res = RunPolicy("llama-server", "glm-5.3-flash", reqs);
  EXPECT_EQ(res.restore_tokens[4], 5200);
  // Its TTFT holds the wait: request 0's prefill (5,000 / 420 s) and decode
  // (200 x 0.033 s) from t = 0, less the 1 s it arrived later.
  const double wait_s = 5000 / shape.prefill_tokens_per_s + 200 * shape.decode_s_per_token - 1.0;
  EXPECT_GT(res.ttft_s[4], wait_s);
}

TEST(LlamaServer, IdleSlotsMoveToThePromptCacheAndCountInItsBudget) {
  // A new task saves the idle slot (turn 1: 3,100 tokens x 12 KB + a 20 MB
  // state = 58 MB) to the prompt cache; with --cache-ram 32M it does not fit,
  // so turn 2 restores nothing. An idle slot kept outside the budget served
  // all of turn 1.
  const ModelShape shape = FindShape("qwen3.5-0.8b").value();
  Trace t;
  t.sessions = {"s"};
  Segment body{7, 2000, Role::kUser};
  t.requests = {MakeRequest(0, {kSys, body}, 9, 100),
                MakeRequest(kHourMs, {kSys, body, {9, 100, Role::kAssistant}, {8, 50}}, 10)};
  for (int64_t budget : {int64_t{32} << 20, int64_t{1} << 30}) {
    auto p = MakePolicy("llama-server", shape, {budget, 0}).value();
    ReplayResult r = Replay(t, shape, *p).value();
    EXPECT_EQ(r.restore_tokens[1], budget < (int64_t{58} << 20) ? 0 : 3100) << budget;
    EXPECT_LE(r.counters.ram_peak_bytes, budget);
  }
}

TEST(LlamaServer, CheckpointsFollowTodaysDefaultSpacing) {
  // User messages start at 1,000, 4,000 and 13,000 (the last); the prompt
  // ends at 21,000. Checkpoints: 1,000 (the first), not 4,000 (within 8,192
  // of it), 13,000 (the last user message), 20,484 and 20,996 (n_ubatch + 4
  // and 4 before the end). A prompt leaving at 5,000 restores 1,000 (a
  // 256-token spacing kept 4,000).
  std::vector<Segment> p = {kSys,        {2, 2000, Role::kUser}, {3, 1000, Role::kAssistant}, {4, 8000, Role::kUser},
                            {5, 1000, Role::kAssistant}, {6, 8000, Role::kUser}};
  std::vector<Segment> q = {kSys, {2, 2000, Role::kUser}, {3, 1000, Role::kAssistant}, {4, 1000, Role::kUser},
                            {7, 500, Role::kUser}};
  std::vector<Segment> q2 = {kSys, {2, 2000, Role::kUser}, {3, 1000, Role::kAssistant}, {4, 8000, Role::kUser},
                             {5, 1000, Role::kAssistant}, {6, 7900, Role::kUser}, {8, 100}};
  auto r = Restores("llama-server", "glm-5.3-flash",
                    {MakeRequest(0, p, 9, 10), MakeRequest(kHourMs, q, 10, 10)});
  EXPECT_EQ(r[1], 1000);
  auto r2 = Restores("llama-server", "glm-5.3-flash", {MakeRequest(0, p, 9, 10), MakeRequest(kHourMs, q2, 10, 10)});
  EXPECT_EQ(r2[1], 20484);  // leaves at 20,900: the checkpoint n_ubatch + 4 before the end
}

TEST(Oracle, WaitsForTheSharedPrefixARunningRequestIsPrefilling) {
  // glm-5.3-flash prefills 420 tokens/s. Request 0 (4,200 tokens) starts at
  // t = 0; request 1 with the same prompt + more arrives at t = 5 s, when
  // about 2,100 tokens are prefilled: it restores all 4,200 once they exist.
  std::vector<Segment> p = {{1, 4200, Role::kSystem}};
  std::vector<Request> reqs = {MakeRequest(0, p, 9, 10), MakeRequest(5000, {{1, 4200, Role::kSystem}, {2, 100}}, 10, 10)};
  EXPECT_EQ(Restores("oracle", "glm-5.3-flash", reqs)[1], 4200);
}

TEST(Omlx, EveryBlockBoundaryHoldsASnapshot) {
  // 6,000 prompt + 100 reply tokens: blocks end at 2,048 and 4,096, each
  // with its snapshot; a prompt sharing 4,000 tokens restores 2,048.
  Segment body{7, 5000, Role::kUser};
  auto r = Restores("omlx", "glm-5.3-flash",
                    {MakeRequest(0, {kSys, body}, 9, 100), MakeRequest(kHourMs, {kSys, {7, 3000}, {8, 300}}, 11)});
  EXPECT_EQ(r[1], 2048);
}

TEST(Omlx, EachBlockIsWrittenOnce) {
  // Two requests with one prompt and reply (6,100 tokens) share their two
  // full blocks: each written to the SSD tier once, KV + snapshot.
  const ModelShape shape = FindShape("glm-5.3-flash").value();
  Segment body{7, 5000, Role::kUser};
  ReplayResult res = RunPolicy("omlx", "glm-5.3-flash", {MakeRequest(0, {kSys, body}, 9, 100), MakeRequest(kHourMs, {kSys, body}, 9, 100)});
  EXPECT_EQ(res.counters.disk_written_bytes, 2 * (2048 * shape.kv_bytes_per_token + shape.recurrent_bytes));
}

}  // namespace
}  // namespace lineage::sim
