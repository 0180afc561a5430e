#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

namespace lineage::engine {
namespace {

TEST(Sampler, GreedyIsArgmaxWithLowestIdOnTies) {
  Sampler s({});
  std::vector<float> logits = {0.1f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(s.Next(logits), 1);
}

// Argmax against the plain scan (first strict improvement wins) on lengths
// around the vector width, ties placed in different lanes, NaN and ±0.
TEST(Sampler, ArgmaxEqualsTheFirstIndexScan) {
  auto scan = [](const std::vector<float>& v) {
    int32_t best = 0;
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] > v[best]) best = static_cast<int32_t>(i);
    return best;
  };
  uint32_t x = 7;
  for (size_t n : {1, 2, 15, 16, 17, 31, 33, 100, 1000}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> v(n);
      for (float& f : v) {
        x = x * 1664525u + 1013904223u;
        f = static_cast<float>((x >> 20) % 7) - 3.0f;  // few values: many ties
      }
      if (trial % 5 == 1) v[(x >> 8) % n] = std::nanf("");
      if (trial % 5 == 2) std::fill(v.begin(), v.end(), trial % 2 ? 0.0f : -0.0f), v[n - 1] = 0.0f;
      if (trial % 5 == 3) v[0] = std::nanf("");
      EXPECT_EQ(Argmax(v), scan(v)) << "n " << n << " trial " << trial;
    }
  }
}

TEST(Sampler, SameSeedSameTokensOtherSeedDiffers) {
  std::vector<float> logits(50);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i));
  SamplingParams p{.temperature = 1.5f, .top_k = 0, .top_p = 1.0f, .seed = 42};
  Sampler a(p), b(p);
  p.seed = 43;
  Sampler c(p);
  int differ = 0;
  for (int i = 0; i < 64; ++i) {
    int32_t ta = a.Next(logits), tb = b.Next(logits), tc = c.Next(logits);
    EXPECT_EQ(ta, tb);
    differ += ta != tc;
  }
  EXPECT_GT(differ, 0);
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  std::vector<float> logits = {0.5f, 0.4f, 0.9f, 0.3f};
  Sampler k1({.temperature = 5.0f, .top_k = 1, .top_p = 1.0f, .seed = 1});
  Sampler p0({.temperature = 5.0f, .top_k = 0, .top_p = 1e-6f, .seed = 1});
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(k1.Next(logits), 2);
    EXPECT_EQ(p0.Next(logits), 2);
  }
}

TEST(Sampler, FrequenciesFollowTheTemperedSoftmax) {
  const std::vector<float> logits = {1.0f, 0.0f, -1.0f};
  const float temp = 2.0f;
  Sampler s({.temperature = temp, .top_k = 0, .top_p = 1.0f, .seed = 7});
  const int n = 40000;
  std::vector<int> count(3);
  for (int i = 0; i < n; ++i) ++count[s.Next(logits)];
  double z = 0;
  for (float l : logits) z += std::exp(l / temp);
  for (int i = 0; i < 3; ++i) {
    const double expected = std::exp(logits[i] / temp) / z;
    EXPECT_NEAR(count[i] / static_cast<double>(n), expected, 0.01) << i;
  }
}

TEST(Sampler, TopPKeepsTheSmallestSufficientSet) {
  // Probabilities at T=1: ~0.665, 0.245, 0.090. top_p 0.8 keeps the first two.
  const std::vector<float> logits = {1.0f, 0.0f, -1.0f};
  Sampler s({.temperature = 1.0f, .top_k = 0, .top_p = 0.8f, .seed = 3});
  std::vector<int> count(3);
  for (int i = 0; i < 20000; ++i) ++count[s.Next(logits)];
  EXPECT_EQ(count[2], 0);
  EXPECT_NEAR(count[0] / 20000.0, 0.665 / (0.665 + 0.245), 0.015);
}

TEST(Sampler, LogitBiasMovesTheChoice) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f};
  Sampler banned({}, {.logit_bias = {{0, -100.0f}}});
  EXPECT_EQ(banned.Next(logits), 1);
  Sampler forced({}, {.logit_bias = {{2, 100.0f}, {99, 100.0f}}});  // an id past the row is ignored
  EXPECT_EQ(forced.Next(logits), 2);
  Sampler hot({.temperature = 1.0f, .seed = 4}, {.logit_bias = {{0, -100.0f}, {1, -100.0f}}});
  for (int i = 0; i < 200; ++i) EXPECT_EQ(hot.Next(logits), 2);
}

// n tokens, each recorded as the sequence takes it.
std::vector<int32_t> Take(Sampler& s, std::span<const float> logits, int n) {
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(s.Next(logits));
    s.Record(out.back());
  }
  return out;
}

TEST(Sampler, PenaltiesCountTheRecordedTokens) {
  const std::vector<float> logits = {1.0f, 0.7f, 0.0f};
  // Frequency: token 0 loses 0.2 per time it was taken.
  LogitAdjustments freq;
  freq.frequency_penalty = 0.2f;
  Sampler f({}, freq);
  // 1.0 > 0.7, then 0.8 > 0.7, then 0.6 < 0.7 (token 1, now 0.5), then 0.6 > 0.5 ...
  EXPECT_EQ(Take(f, logits, 6), (std::vector<int32_t>{0, 0, 1, 0, 1, 0}));
  // Presence: once is enough, and it does not grow.
  LogitAdjustments presence;
  presence.presence_penalty = 0.5f;
  Sampler p({}, presence);
  EXPECT_EQ(Take(p, logits, 4), (std::vector<int32_t>{0, 1, 0, 0}));
  // Without a penalty, recording changes nothing.
  Sampler plain({});
  plain.Record(0);
  EXPECT_EQ(plain.Adjusted(logits).data(), logits.data());
}

}  // namespace
}  // namespace lineage::engine
