// lineage bench --spec measures speed at an asked acceptance: a short run's
// rounds must take drafts in their expected proportions (independent coins
// over a dozen rounds wander by 10-15% of the expected tokens a round).
#include <gtest/gtest.h>

#include <cmath>

#include "engine_test_util.h"
#include "tools/spec_bench.h"

namespace lineage::engine {
namespace {

TEST(SpecBench, AShortRunMeetsTheExpectedTokensPerRound) {
  auto engine = testing::MakeEngine(testing::TinyModel(model::Arch::kQwen3_5));
  SpecBenchOptions o;
  o.prompt_tokens = 16;
  o.gen_tokens = 48;
  o.drafts = 4;
  o.acceptance = {0.5, 0.8, 1.0};
  o.repeats = 2;
  auto r = RunSpecBench(*engine, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->rows.size(), 3u);
  for (const SpecBenchRow& row : r->rows) {
    // 1 + a + ... + a^4 tokens a round when each draft is right with chance a.
    const double expected = row.rate < 1 ? (1 - std::pow(row.rate, 5)) / (1 - row.rate) : 5.0;
    // The last round is cut short by the run's end.
    EXPECT_NEAR(row.tokens_per_round, expected, 0.06 * expected) << "rate " << row.rate;
    EXPECT_GT(row.tok_s, 0);
  }
}

}  // namespace
}  // namespace lineage::engine
