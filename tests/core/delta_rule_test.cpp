// Gated delta rule: the chunked form against the recurrence (spec §2.5-2.6).
//
// Inputs are shaped like a real GDN layer: q and k L2-normalised (q scaled
// by 1/sqrt(dk)), v ~ N(0, 1), beta in (0, 1), log-decays g <= 0 mixing
// near-zero values (-1e-4), ordinary ones (-0.05..-2) and very negative ones
// (-20..-80, whose exp underflows), and a nonzero initial state.
//
// Tolerances:
//  - naive chunked vs naive recurrent, both in double: 1e-9 absolute; the two
//    are the same algebra, so any difference is a bug, not rounding.
//  - fast (fp32) vs naive recurrent (double): 2e-4 absolute on outputs and
//    state of size O(1). fp32 sums of 128 terms and a 64-step substitution
//    give errors near 1e-5; a wrong index, decay or chunk boundary gives
//    errors of 1e-2 or more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/kernels.h"
#include "core/kernels_naive.h"

namespace lineage::kernels {
namespace {

struct Inputs {
  int64_t T, dk, dv, ldqk, ldv, ldgb;
  std::vector<float> q, k, v, g, beta, S0;
};

Inputs MakeInputs(int64_t T, int64_t dk, int64_t dv, uint32_t seed) {
  Inputs in{T, dk, dv, dk + 3, dv + 1, 2, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  in.q.assign(T * in.ldqk, 99.0f);  // padding holds garbage that must be ignored
  in.k.assign(T * in.ldqk, 99.0f);
  in.v.assign(T * in.ldv, 99.0f);
  in.g.assign(T * in.ldgb, 99.0f);
  in.beta.assign(T * in.ldgb, 99.0f);
  for (int64_t t = 0; t < T; ++t) {
    for (std::vector<float>* x : {&in.q, &in.k}) {
      double ss = 0;
      for (int64_t i = 0; i < dk; ++i) ss += std::pow((*x)[t * in.ldqk + i] = nd(rng), 2);
      float scale = static_cast<float>(1.0 / std::sqrt(ss + 1e-6)) / (x == &in.q ? std::sqrt(static_cast<float>(dk)) : 1.0f);
      for (int64_t i = 0; i < dk; ++i) (*x)[t * in.ldqk + i] *= scale;
    }
    for (int64_t j = 0; j < dv; ++j) in.v[t * in.ldv + j] = nd(rng);
    float u = uni(rng), g;
    if (u < 0.3f) g = -1e-4f * uni(rng);
    else if (u < 0.9f) g = -0.05f - 1.95f * uni(rng);
    else g = -20.0f - 60.0f * uni(rng);
    in.g[t * in.ldgb] = g;
    in.beta[t * in.ldgb] = 0.02f + 0.96f * uni(rng);
  }
  in.S0.resize(dk * dv);
  for (float& s : in.S0) s = 0.3f * nd(rng);
  return in;
}

struct Outputs {
  std::vector<float> o, S;
};

template <typename Fn>
Outputs RunRule(const Inputs& in, Fn fn) {
  Outputs out{std::vector<float>(in.T * (in.dv + 2), -5.0f), in.S0};
  fn(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.beta.data(), in.ldgb,
     in.T, in.dk, in.dv, out.S.data(), out.o.data(), in.dv + 2);
  return out;
}

void ExpectNear(const Outputs& a, const Outputs& b, int64_t dv, double tol, const char* what) {
  double worst = 0;
  for (size_t i = 0; i < a.o.size(); ++i) {
    if (static_cast<int64_t>(i % (dv + 2)) >= dv) {
      ASSERT_EQ(a.o[i], -5.0f) << what << ": wrote output padding";
      continue;
    }
    worst = std::max(worst, std::fabs(static_cast<double>(a.o[i]) - b.o[i]));
  }
  for (size_t i = 0; i < a.S.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a.S[i]) - b.S[i]));
  EXPECT_LE(worst, tol) << what;
}

class DeltaRuleTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!ForceIsa(GetParam())) GTEST_SKIP() << "CPU lacks this ISA";
  }
  void TearDown() override { ResetIsa(); }
};

TEST_P(DeltaRuleTest, ChunkedEqualsRecurrent) {
  for (int64_t T : {1, 5, 63, 64, 65, 200}) {
    // 150 columns: whole column strips of the recurrence and a partial one, on both ISAs.
    for (auto [dk, dv] : {std::pair<int64_t, int64_t>{128, 128}, {16, 24}, {16, 150}}) {
      Inputs in = MakeInputs(T, dk, dv, static_cast<uint32_t>(T * 7 + dk));
      Outputs ref = RunRule(in, [](auto... a) { naive::DeltaRuleRecurrent(a...); });
      if (dk == 16 && dv == 24) {  // the double-precision chunk oracle is slow at dk = 128
        Outputs ref_chunked = RunRule(in, [](auto... a) { naive::DeltaRuleChunked(a...); });
        ExpectNear(ref_chunked, ref, dv, 1e-9, "naive chunked");
      }
      SCOPED_TRACE(::testing::Message() << "T=" << T << " dk=" << dk << " dv=" << dv);
      ExpectNear(RunRule(in, [](auto... a) { DeltaRuleRecurrent(a...); }), ref, dv, 2e-4, "recurrent");
      ExpectNear(RunRule(in, [](auto... a) { DeltaRuleChunked(a...); }), ref, dv, 2e-4, "chunked");
    }
  }
}

TEST_P(DeltaRuleTest, ChunkSizeDoesNotMatter) {
  Inputs in = MakeInputs(100, 32, 32, 11);
  Outputs ref = RunRule(in, [](auto... a) { naive::DeltaRuleRecurrent(a...); });
  for (int64_t chunk : {1, 7, 16, 64, 128}) {
    Outputs got = RunRule(in, [chunk](auto... a) { DeltaRuleChunked(a..., chunk); });
    ExpectNear(got, ref, 32, 2e-4, "chunked");
  }
}

TEST_P(DeltaRuleTest, SplittingThePromptCarriesTheState) {
  // Prefill in two calls (as a restored prefix then a new suffix) equals one call.
  Inputs in = MakeInputs(130, 32, 16, 12);
  Outputs whole = RunRule(in, [](auto... a) { DeltaRuleChunked(a...); });
  Outputs split{std::vector<float>(in.T * (in.dv + 2), -5.0f), in.S0};
  const int64_t first = 70, ldo = in.dv + 2;
  DeltaRuleChunked(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.beta.data(),
                   in.ldgb, first, in.dk, in.dv, split.S.data(), split.o.data(), ldo);
  DeltaRuleRecurrent(in.q.data() + first * in.ldqk, in.k.data() + first * in.ldqk, in.ldqk,
                     in.v.data() + first * in.ldv, in.ldv, in.g.data() + first * in.ldgb,
                     in.beta.data() + first * in.ldgb, in.ldgb, in.T - first, in.dk, in.dv,
                     split.S.data(), split.o.data() + first * ldo, ldo);
  ExpectNear(split, whole, in.dv, 2e-4, "split");
}

// The run one call per token (each over the whole width of the state):
// its outputs and, in `states`, S after each token.
Outputs OneCallPerToken(const Inputs& in, int64_t ldo, std::vector<std::vector<float>>* states) {
  Outputs one{std::vector<float>(in.T * ldo, -5.0f), in.S0};
  for (int64_t t = 0; t < in.T; ++t) {
    DeltaRuleRecurrent(in.q.data() + t * in.ldqk, in.k.data() + t * in.ldqk, in.ldqk, in.v.data() + t * in.ldv, in.ldv,
                       in.g.data() + t * in.ldgb, in.beta.data() + t * in.ldgb, in.ldgb, 1, in.dk, in.dv, one.S.data(),
                       one.o.data() + t * ldo, ldo);
    states->push_back(one.S);
  }
  return one;
}

// A run of tokens in one call (strip by strip, each strip through every
// token) gives the bits of one call per token (each over the whole width),
// and each capture the state after its token: verification steps roll back
// to those captures and must continue exactly as decoding would have.
TEST_P(DeltaRuleTest, ARunWithCapturesEqualsItsTokensOneByOne) {
  for (auto [dk, dv] : {std::pair<int64_t, int64_t>{128, 128}, {16, 24}, {16, 150}}) {
    const int64_t T = 7, ldo = dv + 2;
    Inputs in = MakeInputs(T, dk, dv, static_cast<uint32_t>(dk + dv));
    SCOPED_TRACE(::testing::Message() << "dk=" << dk << " dv=" << dv);
    std::vector<std::vector<float>> states;
    const Outputs one = OneCallPerToken(in, ldo, &states);
    // Captures after tokens 0, 1, 2 and 5; one buffer 4 bytes off the
    // 64-byte alignment that streamed stores want.
    std::vector<float> buffers(5 * dk * dv + 64, 0.0f);
    float* base = buffers.data() + (16 - reinterpret_cast<uintptr_t>(buffers.data()) / 4 % 16) % 16;
    float* after[T] = {base, base + dk * dv, base + 2 * dk * dv + 1, nullptr, nullptr, base + 4 * dk * dv, nullptr};
    Outputs run{std::vector<float>(T * ldo, -5.0f), in.S0};
    DeltaRuleRecurrent(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.beta.data(), in.ldgb,
                       T, dk, dv, run.S.data(), run.o.data(), ldo, {after});
    EXPECT_EQ(run.o, one.o);
    EXPECT_EQ(run.S, one.S);
    for (int64_t t = 0; t < T; ++t) {
      if (after[t] == nullptr) continue;
      EXPECT_TRUE(std::equal(states[t].begin(), states[t].end(), after[t])) << "capture after token " << t;
    }
  }
}

// A run kept for a rollback by replay: it reads the state before it from
// `from` and leaves it as it was, writes the state after it elsewhere with
// the bits of one call per token, and its log replayed onto the state
// before it gives, for every prefix, the state a capture would have held.
TEST_P(DeltaRuleTest, ARunsLogReplaysToEveryPrefix) {
  for (auto [dk, dv] : {std::pair<int64_t, int64_t>{128, 128}, {16, 150}}) {
    const int64_t T = 5, ldo = dv + 2;
    Inputs in = MakeInputs(T, dk, dv, static_cast<uint32_t>(3 * dk + dv));
    SCOPED_TRACE(::testing::Message() << "dk=" << dk << " dv=" << dv);
    std::vector<std::vector<float>> states;
    const Outputs one = OneCallPerToken(in, ldo, &states);
    const std::vector<float> before = in.S0;
    std::vector<float> after(dk * dv, 7.0f), log(T * (2 * dk + dv)), o(T * ldo, -5.0f);
    DeltaRuleRecurrent(in.q.data(), in.k.data(), in.ldqk, in.v.data(), in.ldv, in.g.data(), in.beta.data(), in.ldgb,
                       T, dk, dv, after.data(), o.data(), ldo, {nullptr, before.data(), log.data()});
    EXPECT_EQ(before, in.S0) << "the state before the run was written";
    EXPECT_EQ(after, one.S);
    EXPECT_EQ(o, one.o);
    for (int64_t n = 0; n < T; ++n) {
      std::vector<float> S = before;
      DeltaRuleReplay(log.data(), n, dk, dv, S.data());
      EXPECT_EQ(S, n == 0 ? in.S0 : states[n - 1]) << "replayed " << n << " tokens";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothIsas, DeltaRuleTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace lineage::kernels
