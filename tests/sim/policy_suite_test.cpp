// One scenario suite run against every policy on a hybrid and an
// attention-only shape (the RocksDB habit: one parameterised suite for every
// cache implementation).
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "sim/policies/vllm.h"
#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/sim_test_util.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::sim {
namespace {

constexpr int64_t kHourMs = 3600LL * 1000;

struct TraceBuilder {
  Trace trace;
  TraceBuilder() { trace.sessions = {"s"}; }
  // Adds a request; returns its prompt + output as segments.
  std::vector<Segment> Add(int64_t t_ms, std::vector<Segment> prompt, uint64_t out_id, uint32_t out_len,
                           int64_t anchor = 0) {
    trace.requests.push_back(testing::MakeRequest(t_ms, std::move(prompt), out_id, out_len, anchor));
    return PromptAndOutput(trace.requests.back());
  }
};

std::vector<Segment> Cat(std::vector<Segment> a, const std::vector<Segment>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class PolicySuite : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    shape_ = FindShape(std::get<1>(GetParam())).value();
    options_ = {shape_.ram_budget_bytes, shape_.disk_budget_bytes};
  }
  const std::string& policy_name() const { return std::get<0>(GetParam()); }
  ReplayResult Run(const Trace& t, PolicyOptions o) {
    auto p = MakePolicy(policy_name(), shape_, o);
    EXPECT_TRUE(p.ok());
    Result<ReplayResult> r = Replay(t, shape_, **p);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : ReplayResult{};
  }
  ReplayResult Run(const Trace& t) { return Run(t, options_); }
  // Restore points of a block-granular cache fall on block boundaries.
  int64_t Floor(int64_t n) const {
    int64_t block = 1;
    if (policy_name() == "omlx") block = shape_.attention_only() ? 256 : 2048;
    if (policy_name() == "vllm") block = VllmBlockTokens(shape_);
    return n / block * block;
  }
  bool is_oracle() const { return policy_name().rfind("oracle", 0) == 0; }
  ModelShape shape_;
  PolicyOptions options_;
};

TEST_P(PolicySuite, FirstRequestIsColdAndTurnTwoRestores) {
  TraceBuilder b;
  std::vector<Segment> sys = {{1, 3000, Role::kSystem}, {2, 400}};
  auto t1 = b.Add(0, sys, 10, 100, 3000);
  b.Add(kHourMs, Cat(t1, {{3, 500}}), 11, 100, 3000);
  ReplayResult r = Run(b.trace);
  EXPECT_EQ(r.restore_tokens[0], 0);
  EXPECT_GE(r.restore_tokens[1], Floor(3400)) << "turn 2 should restore at least turn 1's prompt";
}

TEST_P(PolicySuite, VerbatimResendIsServed) {
  TraceBuilder b;
  std::vector<Segment> p1 = {{1, 3000, Role::kSystem}, {2, 400}};
  auto t1 = b.Add(0, p1, 10, 100, 3000);
  auto p2 = Cat(t1, {{3, 500}});
  b.Add(kHourMs, p2, 11, 100, 3000);
  b.Add(2 * kHourMs, p2, 12, 100, 3000);
  ReplayResult r = Run(b.trace);
  EXPECT_GE(r.restore_tokens[2], Floor(3400)) << "a resend restores at least the previous turn";
}

TEST_P(PolicySuite, TwoRequestsFromOneParentBothCommit) {
  TraceBuilder b;
  auto t1 = b.Add(0, {{1, 3000, Role::kSystem}, {2, 400}}, 10, 100);
  auto a = b.Add(kHourMs, Cat(t1, {{3, 600}}), 11, 100);
  auto c = b.Add(kHourMs, Cat(t1, {{4, 600}}), 12, 100);
  b.Add(2 * kHourMs, Cat(a, {{5, 300}}), 13, 100);
  b.Add(2 * kHourMs + 1, Cat(c, {{6, 300}}), 14, 100);
  ReplayResult r = Run(b.trace);
  EXPECT_GE(r.restore_tokens[3], Floor(NumTokens(a) - 100)) << "the first sibling's lineage continues";
  EXPECT_GE(r.restore_tokens[4], Floor(NumTokens(c) - 100)) << "the second sibling's lineage continues";
}

// A restore is a subset of what was computed: no policy restores more than
// the oracle (every earlier request's prompt + reply, waited for if needed),
// request by request, on every scenario.
TEST_P(PolicySuite, NoPolicyBeatsTheOracle) {
  for (const std::string& scenario : ScenarioNames()) {
    Trace t = GenerateTrace(scenario, 3, 250).value();
    auto oracle = MakePolicy("oracle", shape_, options_).value();
    ReplayResult o = Replay(t, shape_, *oracle).value();
    ReplayResult r = Run(t);
    ASSERT_EQ(r.restore_tokens.size(), o.restore_tokens.size());
    for (size_t i = 0; i < r.restore_tokens.size(); ++i)
      ASSERT_LE(r.restore_tokens[i], o.restore_tokens[i]) << scenario << " request " << i;
    EXPECT_LE(r.cached_tokens, o.cached_tokens) << scenario;
  }
}

// Wraps a policy and checks its RAM after every call.
class BudgetCheck final : public Policy {
 public:
  BudgetCheck(std::unique_ptr<Policy> inner, int64_t budget) : inner_(std::move(inner)), budget_(budget) {}
  std::string name() const override { return inner_->name(); }
  Admission Admit(const RequestView& r, int64_t t) override { auto a = inner_->Admit(r, t); Check(); return a; }
  void Commit(const RequestView& r, int64_t t) override { inner_->Commit(r, t); Check(); }
  void Finish(const RequestView& r, int64_t t) override { inner_->Finish(r, t); Check(); }
  PolicyCounters counters() const override { return inner_->counters(); }
  Status status() const override { return inner_->status(); }
  int64_t worst_bytes = 0;

 private:
  void Check() { worst_bytes = std::max(worst_bytes, inner_->counters().ram_bytes); }
  std::unique_ptr<Policy> inner_;
  int64_t budget_;
};

TEST_P(PolicySuite, RamBudgetHoldsAfterEveryCall) {
  if (is_oracle()) GTEST_SKIP() << "the oracles are unbounded by definition";
  // Concurrent requests lease the entries they restored from; rolling
  // windows and deletions leave those entries unabsorbed while others commit.
  for (const char* scenario : {"mixed", "window", "middle-delete"}) {
    Trace t = GenerateTrace(scenario, 4, 400).value();
    for (int64_t divisor : {16, 64}) {
      PolicyOptions tight = options_;
      tight.ram_budget_bytes = options_.ram_budget_bytes / divisor;
      auto inner = MakePolicy(policy_name(), shape_, tight).value();
      BudgetCheck check(std::move(inner), tight.ram_budget_bytes);
      ReplayResult r = Replay(t, shape_, check).value();
      EXPECT_LE(check.worst_bytes, tight.ram_budget_bytes) << scenario << " at 1/" << divisor;
      EXPECT_LE(r.counters.ram_peak_bytes, tight.ram_budget_bytes) << scenario << " at 1/" << divisor;
      EXPECT_GT(r.counters.evictions, 0) << scenario << ": a 1/" << divisor << " budget must evict";
    }
  }
}

TEST_P(PolicySuite, ReplayIsDeterministic) {
  Trace t = GenerateTrace("coding", 9, 200).value();
  ReplayResult a = Run(t), b = Run(t);
  EXPECT_EQ(a.restore_tokens, b.restore_tokens);
  EXPECT_EQ(a.counters.ram_peak_bytes, b.counters.ram_peak_bytes);
  EXPECT_EQ(a.counters.evictions, b.counters.evictions);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicySuite,
                         ::testing::Combine(::testing::ValuesIn(PolicyNames()),
                                            ::testing::Values("glm-5.3-flash", "qwen3-0.6b")),
                         [](const auto& info) {
                           std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace lineage::sim
