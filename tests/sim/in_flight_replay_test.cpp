// In-flight sharing in the replay: a request whose prefix another request is
// still prefilling (in modelled time) waits for that prefill's capture.
#include <gtest/gtest.h>

#include "sim/policies/lineage_adapter.h"
#include "sim/replay.h"
#include "sim/tracegen/scenarios.h"
#include "sim_test_util.h"

namespace lineage::sim {
namespace {

using testing::MakeRequest;

Trace TwoQuestions(int64_t second_ms) {
  Trace t;
  t.sessions = {"a", "b"};
  const Segment doc{1, 4000, Role::kUser};
  t.requests.push_back(MakeRequest(0, {doc, {2, 100, Role::kUser}}, 10, 20));
  t.requests.push_back(MakeRequest(second_ms, {doc, {3, 80, Role::kUser}}, 11, 20));
  t.requests[1].session = 1;
  return t;
}

ReplayResult ReplayLineage(const Trace& t, const std::string& shape_name, bool share) {
  ModelShape shape = FindShape(shape_name).value();
  PolicyOptions po{shape.ram_budget_bytes, 0};
  cache::CacheOptions o;
  o.share_in_flight = share;
  LineagePolicy p(shape, po, false, o);
  Result<ReplayResult> r = Replay(t, shape, p);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

TEST(InFlightReplay, ASecondQuestionWaitsForTheDocumentTheFirstIsPrefilling) {
  // qwen3.5-0.8b prefills 60 tokens/s: the first request computes the
  // 4,000-token document until ~67 s; the second arrives at 30 s.
  const Trace t = TwoQuestions(30'000);
  const ReplayResult shared = ReplayLineage(t, "qwen3.5-0.8b", true);
  EXPECT_EQ(shared.restore_tokens[0], 0);
  EXPECT_EQ(shared.restore_tokens[1], cache::BeforeBoundary(4000));
  // It waits until ~66.6 s, then prefills 82 tokens: about 38 s instead of 68.
  EXPECT_GT(shared.ttft_p50_s, 36.0);
  EXPECT_LT(shared.ttft_p50_s, 40.0);
  const ReplayResult alone = ReplayLineage(t, "qwen3.5-0.8b", false);
  EXPECT_EQ(alone.restore_tokens[1], 0);
  EXPECT_GT(alone.ttft_p50_s, 60.0);
}

TEST(InFlightReplay, NoWaitOnceTheFirstHasCommitted) {
  const Trace t = TwoQuestions(200'000);
  const ReplayResult r = ReplayLineage(t, "qwen3.5-0.8b", true);
  // Restored from the first request's entry (its structural point at the
  // last block boundary inside the document) without waiting.
  EXPECT_EQ(r.restore_tokens[1], 3584);
  EXPECT_LT(r.ttft_p50_s, 10.0);
}

TEST(InFlightReplay, LineageServesTheMooncakeScenarioAtLeastAsWellAsWithoutSharing) {
  Result<Trace> t = GenerateTrace("mooncake", 3, 300, "qwen3.5-0.8b");
  ASSERT_TRUE(t.ok());
  const ReplayResult with = ReplayLineage(*t, "qwen3.5-0.8b", true), without = ReplayLineage(*t, "qwen3.5-0.8b", false);
  EXPECT_GT(with.cached_tokens, without.cached_tokens);
  EXPECT_LE(with.ttft_p50_s, without.ttft_p50_s);
}

}  // namespace
}  // namespace lineage::sim
