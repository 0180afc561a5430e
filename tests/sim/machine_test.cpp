// The one machine every replayed request shares (sim/machine.h), driven
// directly and through the replay.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/machine.h"
#include "sim/policies/oracle.h"
#include "sim/replay.h"
#include "sim_test_util.h"

namespace lineage::sim {
namespace {

using testing::MakeRequest;
using testing::TestShape;

int64_t CeilMs(double seconds) { return static_cast<int64_t>(std::ceil(seconds * 1000.0)); }

// Runs the machine until nothing runs; returns (time, index) of every prompt end.
std::vector<std::pair<int64_t, int64_t>> RunToEnd(Machine& m, std::vector<std::pair<int64_t, int64_t>>* replies = nullptr) {
  std::vector<std::pair<int64_t, int64_t>> prompts;
  m.Kick();
  while (m.NextEventMs() != Machine::kNever) {
    Machine::Ended e = m.Advance();
    for (int64_t i : e.prompts) prompts.push_back({m.now_ms(), i});
    if (replies)
      for (int64_t i : e.replies) replies->push_back({m.now_ms(), i});
    m.Kick();
  }
  return prompts;
}

Machine::Work Prefill(int64_t m, int64_t restore = 0, int64_t out = 0) {
  Machine::Work w;
  w.prompt_tokens = m;
  w.restore_tokens = restore;
  w.output_tokens = out;
  return w;
}

TEST(Machine, OnePromptRunsInChunksAtTheShapesSpeed) {
  Machine m(TestShape(), {});
  m.Start(0, Prefill(1000, 0, 100));
  std::vector<std::pair<int64_t, int64_t>> replies;
  auto prompts = RunToEnd(m, &replies);
  // Chunks of 256, 256, 256, 232 tokens: 10 s; then 100 decode steps of 10 ms.
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].first, 10'000);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].first, 11'000);
}

TEST(Machine, AMeasuredMachineChargesStepsContextAndSequences) {
  ModelShape shape = TestShape();  // 100 tokens/s, 10 ms a decode step
  shape.prefill_step_s = 0.5;
  shape.prefill_pair_s = 1e-6;
  shape.decode_row_s = 0.002;
  shape.decode_pair_s = 1e-6;
  Machine m(shape, {});
  m.Start(0, Prefill(512, 0, 10));
  m.Start(1, Prefill(512, 256, 10));
  std::vector<std::pair<int64_t, int64_t>> replies;
  auto prompts = RunToEnd(m, &replies);
  // Request 0: chunks [0, 256) and [256, 512); request 1: one chunk [256, 512).
  // A chunk at p: 0.5 + 2.56 + 1e-6 x 256 x (p + 127.5).
  const double first = 0.5 + 2.56 + 1e-6 * 256 * 127.5, later = 0.5 + 2.56 + 1e-6 * 256 * (256 + 127.5);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].second, 1);  // its one chunk runs second, after request 0's first
  EXPECT_EQ(prompts[0].first, CeilMs(first) + CeilMs(later));
  // Request 1 decodes alone beside request 0's second chunk (one sequence
  // at context 512), then both decode: 10 + 2 + (512 + 1 + 512 + 1 + ...) us.
  ASSERT_EQ(prompts[1].first, CeilMs(first) + CeilMs(later) + CeilMs(later + 0.010 + 1e-6 * 512));
  // Then nine steps of both (contexts 513 + j and 512 + j), and request 0's
  // last step alone at 521.
  int64_t both = 0;
  for (int j = 0; j < 9; ++j) both += CeilMs(0.010 + 0.002 + 1e-6 * (1025 + 2 * j));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].second, 1);
  EXPECT_EQ(replies[1].first - prompts[1].first, both + CeilMs(0.010 + 1e-6 * 521));
}

TEST(Machine, TwoPromptsShareTheMachineRoundRobin) {
  Machine m(TestShape(), {});
  m.Start(0, Prefill(1000));
  m.Start(1, Prefill(1000));
  auto prompts = RunToEnd(m);
  // Their chunks alternate: the first ends after 7 chunks (17.68 s), the
  // second one chunk later; both together take what they would in a row.
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0], (std::pair<int64_t, int64_t>{17'680, 0}));
  EXPECT_EQ(prompts[1], (std::pair<int64_t, int64_t>{20'000, 1}));
}

TEST(Machine, DecodeStepsAreBatchedAndInterleaveWithPrefillChunks) {
  Machine m(TestShape(), {});
  m.Start(0, Prefill(10, 0, 50));
  m.Start(1, Prefill(10, 0, 50));
  std::vector<std::pair<int64_t, int64_t>> replies;
  RunToEnd(m, &replies);
  // 0.1 s each to prefill; while 1 prefills, 0 decodes its first token in
  // the same turn; then both decode together, one step for both.
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].first, 100 + 110 + 49 * 10);
  EXPECT_EQ(replies[1].first, 100 + 110 + 49 * 10 + 10);
}

TEST(Machine, AWaiterStartsWhenItsSourceHasComputedItsRestorePoint) {
  Machine m(TestShape(), {});
  m.Start(0, Prefill(1000));
  Machine::Work w = Prefill(1010, 512);
  w.wait_for = 0;
  w.wait_tokens = 512;
  m.Start(1, w);
  EXPECT_EQ(m.ComputedTokens(1), 0);
  auto prompts = RunToEnd(m);
  // It computes nothing until request 0 has 512 tokens (two chunks, 5.12 s),
  // then its 498 tokens (256 + 242) alternate with request 0's other 488.
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0], (std::pair<int64_t, int64_t>{12'660, 1}));
  EXPECT_EQ(prompts[1], (std::pair<int64_t, int64_t>{14'980, 0}));
}

TEST(Machine, IoDelaysAPrefillWithoutUsingCompute) {
  Machine m(TestShape(), {});
  Machine::Work w = Prefill(100);
  w.io_ms = 700;
  m.Start(0, w);
  m.Start(1, Prefill(100));
  auto prompts = RunToEnd(m);
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0], (std::pair<int64_t, int64_t>{1'000, 1}));
  EXPECT_EQ(prompts[1], (std::pair<int64_t, int64_t>{2'000, 0}));
}

TEST(Replay, AdmitsAtMostParallelRequestsAndTtftIncludesTheQueue) {
  ModelShape shape = TestShape();
  Trace t;
  t.sessions = {"s"};
  t.requests.push_back(MakeRequest(0, {{1, 1000}}, 2, 100));
  t.requests.push_back(MakeRequest(0, {{3, 1000}}, 4, 100));
  for (int parallel : {1, 2}) {
    OraclePolicy oracle(shape);
    MachineOptions mo;
    mo.parallel = parallel;
    ReplayResult r = Replay(t, shape, oracle, mo).value();
    ASSERT_EQ(r.ttft_s.size(), 2u);
    if (parallel == 1) {
      // The second waits for the first's reply end (11 s), then 10 s.
      EXPECT_DOUBLE_EQ(r.ttft_s[0], 10.0);
      EXPECT_DOUBLE_EQ(r.ttft_s[1], 21.0);
    } else {
      // The second's last chunk shares its turn with the first's decode step.
      EXPECT_DOUBLE_EQ(r.ttft_s[0], 17.68);
      EXPECT_DOUBLE_EQ(r.ttft_s[1], 20.01);
    }
  }
}

}  // namespace
}  // namespace lineage::sim
