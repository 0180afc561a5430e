// Vector helpers and RmsNorm against the naive versions, both ISA paths, on
// lengths that exercise the vector body and every tail length.
// Tolerances: sums of n products 2 * n * 2^-24 of sum|a b| (fp32 summation,
// 2x margin); single multiply-adds 1 ulp; ops built on exp 4e-6 relative
// (a few ulp of the polynomial exp and the division); norms see below.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <vector>

#include "core/kernels.h"
#include "core/kernels_naive.h"
#include "random_weights.h"

namespace lineage::kernels {
namespace {

using testing::RandomActivations;

class VectorOpsTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!ForceIsa(GetParam())) GTEST_SKIP() << "CPU lacks this ISA";
  }
  void TearDown() override { ResetIsa(); }
};

const int64_t kLengths[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 1024, 1031};

// Elementwise results built on exp: relative 4e-6 (a few ulp of the exp
// approximation plus the division) or absolute 1e-30 near zero.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), 4e-6f * std::fabs(want[i]) + 1e-30f)
        << what << " at " << i << " of " << got.size();
}

TEST_P(VectorOpsTest, DotAxpyScaleAdd) {
  for (int64_t n : kLengths) {
    auto a = RandomActivations(n, 1), b = RandomActivations(n, 2);
    double abs_sum = 0;
    for (int64_t i = 0; i < n; ++i) abs_sum += std::fabs(static_cast<double>(a[i]) * b[i]);
    EXPECT_NEAR(Dot(a.data(), b.data(), n), naive::Dot(a.data(), b.data(), n),
                2.0 * n * std::ldexp(1.0, -24) * abs_sum + 1e-30)
        << n;

    // Single fused or unfused operations: the results are within 1 ulp.
    auto y = b, y_ref = b;
    Axpy(0.37f, a.data(), y.data(), n);
    naive::Axpy(0.37f, a.data(), y_ref.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], y_ref[i], 1.2e-7f * (std::fabs(y_ref[i]) + std::fabs(0.37f * a[i]))) << n;

    auto s = a, s_ref = a;
    Scale(s.data(), -1.25f, n);
    naive::Scale(s_ref.data(), -1.25f, n);
    EXPECT_EQ(s, s_ref);

    std::vector<float> sum(n), sum_ref(n);
    Add(a.data(), b.data(), sum.data(), n);
    naive::Add(a.data(), b.data(), sum_ref.data(), n);
    EXPECT_EQ(sum, sum_ref);
    Add(a.data(), b.data(), a.data(), n);  // aliasing out == a
    EXPECT_EQ(a, sum_ref);
  }
}

// Every length and alignment of the destination (the streaming stores need
// vector-aligned addresses: the head and tail take plain ones); nothing
// outside [dst, dst + n) is written.
TEST_P(VectorOpsTest, CopyStreamingEqualsACopy) {
  for (int64_t n : kLengths) {
    const auto src = RandomActivations(n, 3);
    for (int64_t offset = 0; offset < 17; offset += 3) {
      std::vector<float> dst(static_cast<size_t>(n + offset + 8), -9.0f);
      CopyStreaming(src.data(), n, dst.data() + offset);
      for (int64_t i = 0; i < offset; ++i) ASSERT_EQ(dst[i], -9.0f) << n << " " << offset;
      ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + offset)) << n << " " << offset;
      for (int64_t i = n + offset; i < n + offset + 8; ++i) ASSERT_EQ(dst[i], -9.0f) << n << " " << offset;
    }
  }
}

TEST_P(VectorOpsTest, SiluSigmoidSiluMul) {
  for (int64_t n : kLengths) {
    auto a = RandomActivations(n, 3, 4.0f), b = RandomActivations(n, 4);
    if (n > 4) a[1] = -100.0f, a[2] = 100.0f, a[3] = -87.0f;  // saturated ends
    std::vector<float> out(n), ref(n);
    Sigmoid(a.data(), out.data(), n);
    naive::Sigmoid(a.data(), ref.data(), n);
    ExpectClose(out, ref, "sigmoid");
    Silu(a.data(), out.data(), n);
    naive::Silu(a.data(), ref.data(), n);
    ExpectClose(out, ref, "silu");
    SiluMul(a.data(), b.data(), out.data(), n);
    naive::SiluMul(a.data(), b.data(), ref.data(), n);
    ExpectClose(out, ref, "silu_mul");
    auto in_place = b;
    SiluMul(a.data(), in_place.data(), in_place.data(), n);  // out aliases b, as the FFN uses it
    ExpectClose(in_place, ref, "silu_mul in place");
  }
}

// Softplus over the gates' range and past it: both saturated ends (x and
// exp(x)), the crossover, and values whose exp overflows.
TEST_P(VectorOpsTest, Softplus) {
  for (int64_t n : kLengths) {
    auto x = RandomActivations(n, 9, 12.0f);
    if (n > 6) x[1] = -100.0f, x[2] = 100.0f, x[3] = -20.0f, x[4] = 30.0f, x[5] = 0.0f, x[6] = -12.0f;
    std::vector<float> out(n), ref(n);
    Softplus(x.data(), out.data(), n);
    naive::Softplus(x.data(), ref.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(out[i], ref[i], 6e-8f + 3e-7f * std::fabs(ref[i])) << "x = " << x[i] << " n = " << n;
  }
}

TEST_P(VectorOpsTest, Softmax) {
  for (int64_t n : kLengths) {
    auto x = RandomActivations(n, 5, 3.0f);
    if (n > 2) x[n / 2] = 60.0f;  // a dominant logit; others underflow relative to it
    auto ref = x;
    Softmax(x.data(), n);
    naive::Softmax(ref.data(), n);
    ExpectClose(x, ref, "softmax");
  }
}

TEST_P(VectorOpsTest, RmsNormAndL2Normalize) {
  for (int64_t n : kLengths) {
    const int64_t rows = 3;
    auto x = RandomActivations(rows * n, 6), w = RandomActivations(n, 7);
    std::vector<float> y(rows * n), ref(rows * n);
    // A few ulp: one sum (n * 2^-24 relative, but it enters through a sqrt,
    // halving it) and two products.
    const float tol = static_cast<float>(n) * 6e-8f + 4e-7f;
    for (const float* wp : std::vector<const float*>{w.data(), nullptr}) {
      RmsNorm(x.data(), wp, 1e-6f, rows, n, y.data());
      naive::RmsNorm(x.data(), wp, 1e-6f, rows, n, ref.data());
      for (int64_t i = 0; i < rows * n; ++i) ASSERT_NEAR(y[i], ref[i], tol * std::fabs(ref[i]) + 1e-30f) << n;
    }
    auto inplace = x;
    RmsNorm(inplace.data(), w.data(), 1e-6f, rows, n, inplace.data());
    naive::RmsNorm(x.data(), w.data(), 1e-6f, rows, n, ref.data());
    for (int64_t i = 0; i < rows * n; ++i) ASSERT_NEAR(inplace[i], ref[i], tol * std::fabs(ref[i]) + 1e-30f);

    auto l2 = x, l2_ref = x;
    L2Normalize(l2.data(), rows, n, 1e-6f);
    naive::L2Normalize(l2_ref.data(), rows, n, 1e-6f);
    for (int64_t i = 0; i < rows * n; ++i) ASSERT_NEAR(l2[i], l2_ref[i], tol * std::fabs(l2_ref[i]) + 1e-30f);
  }
}

INSTANTIATE_TEST_SUITE_P(BothIsas, VectorOpsTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace lineage::kernels
