// KDA delta rule (spec §7.2): the recurrence and the chunked form against a
// double-precision recurrence written here, over long random sequences whose
// per-channel log-decays mix values near 0 (decay ~1), ordinary ones and
// very negative ones (decay ~0, and cumulative decays within a chunk far
// beyond e^-88, where exp(G_r) * exp(-G_s) would overflow).
//
// Tolerance 2e-4 absolute on outputs and state of size O(1): fp32 sums of
// 128 terms give ~1e-5; a wrong channel, decay or chunk boundary gives 1e-2
// or more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/isa.h"
#include "core/kda_rule.h"

namespace lineage::kernels {
namespace {

struct Inputs {
  int64_t T, dk, dv, ldqk, ldv, ldg, ldb;
  std::vector<float> q, k, v, g, beta, S0;
};

// `mode`: 0 mixed, 1 all near zero (decay ~1), 2 all strongly negative.
Inputs MakeInputs(int64_t T, int64_t dk, int64_t dv, uint32_t seed, int mode) {
  Inputs in{T, dk, dv, dk + 3, dv + 1, dk + 2, 3, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  in.q.assign(T * in.ldqk, 99.0f);  // padding holds garbage that must be ignored
  in.k.assign(T * in.ldqk, 99.0f);
  in.v.assign(T * in.ldv, 99.0f);
  in.g.assign(T * in.ldg, 99.0f);
  in.beta.assign(T * in.ldb, 99.0f);
  for (int64_t t = 0; t < T; ++t) {
    for (std::vector<float>* x : {&in.q, &in.k}) {
      double ss = 0;
      for (int64_t i = 0; i < dk; ++i) ss += std::pow((*x)[t * in.ldqk + i] = nd(rng), 2);
      const float scale =
          static_cast<float>(1.0 / std::sqrt(ss + 1e-6)) / (x == &in.q ? std::sqrt(static_cast<float>(dk)) : 1.0f);
      for (int64_t i = 0; i < dk; ++i) (*x)[t * in.ldqk + i] *= scale;
    }
    for (int64_t j = 0; j < dv; ++j) in.v[t * in.ldv + j] = nd(rng);
    for (int64_t i = 0; i < dk; ++i) {
      const float u = mode == 1 ? 0.0f : mode == 2 ? 0.95f : uni(rng);
      float g;
      if (u < 0.3f) g = -1e-4f * uni(rng);
      else if (u < 0.9f) g = -0.05f - 1.95f * uni(rng);
      else g = -20.0f - 60.0f * uni(rng);
      in.g[t * in.ldg + i] = g;
    }
    in.beta[t * in.ldb] = 0.02f + 0.96f * uni(rng);
  }
  in.S0.resize(dk * dv);
  for (float& s : in.S0) s = 0.3f * nd(rng);
  return in;
}

// The recurrence of spec §7.2 in double.
void Oracle(const Inputs& in, std::vector<double>* S, std::vector<double>* o) {
  const int64_t dk = in.dk, dv = in.dv;
  S->assign(in.S0.begin(), in.S0.end());
  o->assign(in.T * dv, 0.0);
  for (int64_t t = 0; t < in.T; ++t) {
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) (*S)[i * dv + j] *= std::exp(static_cast<double>(in.g[t * in.ldg + i]));
    for (int64_t j = 0; j < dv; ++j) {
      double m = 0;
      for (int64_t i = 0; i < dk; ++i) m += (*S)[i * dv + j] * in.k[t * in.ldqk + i];
      const double delta = in.beta[t * in.ldb] * (in.v[t * in.ldv + j] - m);
      for (int64_t i = 0; i < dk; ++i) (*S)[i * dv + j] += in.k[t * in.ldqk + i] * delta;
    }
    for (int64_t j = 0; j < dv; ++j) {
      double s = 0;
      for (int64_t i = 0; i < dk; ++i) s += (*S)[i * dv + j] * in.q[t * in.ldqk + i];
      (*o)[t * dv + j] = s;
    }
  }
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

void Check(int64_t T, int64_t dk, int64_t dv, uint32_t seed, int mode, int64_t chunk) {
  const Inputs in = MakeInputs(T, dk, dv, seed, mode);
  std::vector<double> S_ref, o_ref;
  Oracle(in, &S_ref, &o_ref);
  std::vector<float> S = in.S0, o(T * dv, -7.0f);
  KdaRecurrent(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.ldg, in.beta.data(), in.ldb,
               T, dk, dv, S.data(), o.data(), dv);
  EXPECT_LT(MaxAbsDiff(o, o_ref), 2e-4) << "recurrent o, T=" << T << " mode " << mode;
  EXPECT_LT(MaxAbsDiff(S, S_ref), 2e-4) << "recurrent S, T=" << T << " mode " << mode;
  // Chunked in pieces of random length, carrying the state across them.
  std::vector<float> Sc = in.S0, oc(T * dv, -7.0f);
  std::mt19937 rng(seed + 1);
  for (int64_t t0 = 0; t0 < T;) {
    const int64_t n = std::min<int64_t>(T - t0, 1 + rng() % 100);
    KdaChunked(in.q.data() + t0 * in.ldqk, in.k.data() + t0 * in.ldqk, in.ldqk, in.v.data() + t0 * in.ldv, in.ldv,
               in.g.data() + t0 * in.ldg, in.ldg, in.beta.data() + t0 * in.ldb, in.ldb, n, dk, dv, Sc.data(),
               oc.data() + t0 * dv, dv, chunk);
    t0 += n;
  }
  EXPECT_LT(MaxAbsDiff(oc, o_ref), 2e-4) << "chunked o, T=" << T << " mode " << mode << " chunk " << chunk;
  EXPECT_LT(MaxAbsDiff(Sc, S_ref), 2e-4) << "chunked S, T=" << T << " mode " << mode << " chunk " << chunk;
}

class KdaRule : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!ForceIsa(GetParam())) GTEST_SKIP() << "CPU lacks this ISA";
  }
  void TearDown() override { ResetIsa(); }
};

TEST_P(KdaRule, MixedDecaysOverALongSequence) {
  Check(700, 32, 32, 1, 0, 16);
  Check(300, 128, 128, 2, 0, 16);
  Check(257, 64, 32, 3, 0, 64);
}

TEST_P(KdaRule, DecaysNearOne) {
  Check(600, 32, 32, 4, 1, 16);
  Check(200, 128, 128, 5, 1, 16);
}

TEST_P(KdaRule, DecaysNearZeroNeverOverflow) {
  // Every channel loses e^20..e^80 per token: a 16-token chunk accumulates
  // far past e^-88 per channel.
  Check(500, 32, 32, 6, 2, 16);
  Check(130, 128, 128, 7, 2, 64);
}

TEST_P(KdaRule, AnyChunkSize) {
  for (int64_t chunk : {1, 3, 16, 33}) Check(150, 32, 16, 8, 0, chunk);
}

// Widths that are not whole vectors or strips: partial loads and stores, and
// rows the 4-row tiles leave over.
TEST_P(KdaRule, WidthsThatAreNotWholeVectors) {
  Check(90, 20, 150, 9, 0, 16);
  Check(70, 130, 24, 10, 0, 32);
}

// The run one call per token: S and o at its end, and S after each token.
void OneCallPerToken(const Inputs& in, std::vector<float>* S, std::vector<float>* o,
                     std::vector<std::vector<float>>* states) {
  *S = in.S0;
  o->assign(in.T * in.dv, -7.0f);
  for (int64_t t = 0; t < in.T; ++t) {
    KdaRecurrent(in.q.data() + t * in.ldqk, in.k.data() + t * in.ldqk, in.ldqk, in.v.data() + t * in.ldv, in.ldv,
                 in.g.data() + t * in.ldg, in.ldg, in.beta.data() + t * in.ldb, in.ldb, 1, in.dk, in.dv, S->data(),
                 o->data() + t * in.dv, in.dv);
    states->push_back(*S);
  }
}

// As DeltaRuleTest.ARunWithCapturesEqualsItsTokensOneByOne: one call over
// a run with captures gives the bits of one call per token.
TEST_P(KdaRule, ARunWithCapturesEqualsItsTokensOneByOne) {
  for (auto [dk, dv] : {std::pair<int64_t, int64_t>{128, 128}, {16, 150}}) {
    const int64_t T = 6;
    const Inputs in = MakeInputs(T, dk, dv, static_cast<uint32_t>(dk * 3 + dv), 0);
    SCOPED_TRACE(::testing::Message() << "dk=" << dk << " dv=" << dv);
    std::vector<float> S1, o1;
    std::vector<std::vector<float>> states;
    OneCallPerToken(in, &S1, &o1, &states);
    std::vector<float> buffers(3 * dk * dv);
    float* after[T] = {buffers.data(), nullptr, buffers.data() + dk * dv, nullptr, buffers.data() + 2 * dk * dv,
                       nullptr};
    std::vector<float> S = in.S0, o(T * dv, -7.0f);
    KdaRecurrent(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.ldg, in.beta.data(), in.ldb,
                 T, dk, dv, S.data(), o.data(), dv, {after});
    EXPECT_EQ(o, o1);
    EXPECT_EQ(S, S1);
    for (int64_t t = 0; t < T; ++t) {
      if (after[t] == nullptr) continue;
      EXPECT_TRUE(std::equal(states[t].begin(), states[t].end(), after[t])) << "capture after token " << t;
    }
  }
}

// As DeltaRuleTest.ARunsLogReplaysToEveryPrefix, with a decay per channel.
TEST_P(KdaRule, ARunsLogReplaysToEveryPrefix) {
  const int64_t T = 5, dk = 128, dv = 128;
  const Inputs in = MakeInputs(T, dk, dv, 77, 0);
  std::vector<float> S1, o1;
  std::vector<std::vector<float>> states;
  OneCallPerToken(in, &S1, &o1, &states);
  std::vector<float> after(dk * dv, 7.0f), log(T * (2 * dk + dv)), o(T * dv, -7.0f);
  KdaRecurrent(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.ldg, in.beta.data(), in.ldb, T,
               dk, dv, after.data(), o.data(), dv, {nullptr, in.S0.data(), log.data()});
  EXPECT_EQ(after, S1);
  EXPECT_EQ(o, o1);
  for (int64_t n = 0; n < T; ++n) {
    std::vector<float> S = in.S0;
    DeltaRuleReplay(log.data(), n, dk, dv, S.data());
    EXPECT_EQ(S, n == 0 ? in.S0 : states[n - 1]) << "replayed " << n << " tokens";
  }
}

INSTANTIATE_TEST_SUITE_P(BothIsas, KdaRule, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace lineage::kernels
