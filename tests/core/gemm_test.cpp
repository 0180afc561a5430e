// Gemm against naive::Gemm for every dtype, both ISA paths, odd shapes and
// strides, with a per-output error bound derived from the documented
// precision of each path (see kernels.h):
//   |Y - Y_ref| <= (cols * 2^-24 * 2) * sum|w x|            fp32 summation, 2x margin
//                + sum_b (max|x_b| / 127) * 0.51 * sum_b|w|  Q8_0 only: X is int8-quantised
//                                        (half a step, 2% margin for the float scaling)
// An indexing or blocking bug produces errors of the order of |Y| itself,
// far above these bounds.
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
using testing::RandomWeights;

struct GemmCase {
  DType dtype;
  int64_t rows, cols, T, ldx_pad, ldy_pad;
};

void CheckGemm(const GemmCase& c, ThreadPool* pool) {
  auto w = RandomWeights(c.dtype, c.rows, c.cols, 17 + static_cast<uint32_t>(c.rows));
  const int64_t ldx = c.cols + c.ldx_pad, ldy = c.rows + c.ldy_pad;
  std::vector<float> x = RandomActivations(c.T * ldx, 5 + static_cast<uint32_t>(c.T));
  std::vector<float> y(static_cast<size_t>(c.T * ldy), -7.0f), ref(y.size(), -7.0f);
  Gemm(w.view, x.data(), ldx, y.data(), ldy, c.T, pool);
  naive::Gemm(w.view, x.data(), ldx, ref.data(), ldy, c.T, nullptr);

  const bool int8_x = c.dtype == DType::kQ8_0;
  std::vector<float> wrow(static_cast<size_t>(c.cols));
  int64_t failures = 0;
  for (int64_t o = 0; o < c.rows; ++o) {
    DecodeToFloat(w.view, o * c.cols, c.cols, wrow.data());
    for (int64_t t = 0; t < c.T; ++t) {
      const float* xt = x.data() + t * ldx;
      double abs_sum = 0, quant = 0;
      for (int64_t b = 0; b < c.cols; b += 32) {
        double amax = 0, wsum = 0;
        for (int64_t i = b; i < std::min(b + 32, c.cols); ++i) {
          abs_sum += std::fabs(static_cast<double>(wrow[i]) * xt[i]);
          amax = std::max(amax, static_cast<double>(std::fabs(xt[i])));
          wsum += std::fabs(wrow[i]);
        }
        quant += amax / 127.0 * 0.51 * wsum;
      }
      double bound = 2.0 * c.cols * std::ldexp(1.0, -24) * abs_sum + 1e-30;
      if (int8_x) bound += quant;
      double err = std::fabs(static_cast<double>(y[t * ldy + o]) - ref[t * ldy + o]);
      if (!(err <= bound) && ++failures <= 5)
        ADD_FAILURE() << Info(c.dtype).name << " rows=" << c.rows << " cols=" << c.cols
                      << " T=" << c.T << " o=" << o << " t=" << t << " got " << y[t * ldy + o]
                      << " want " << ref[t * ldy + o] << " bound " << bound;
    }
  }
  EXPECT_EQ(failures, 0);
  // Padding columns of Y are not written.
  for (int64_t t = 0; t < c.T; ++t)
    for (int64_t o = c.rows; o < ldy; ++o) ASSERT_EQ(y[t * ldy + o], -7.0f);
}

class GemmTest : public ::testing::TestWithParam<std::tuple<Isa, DType>> {
 protected:
  void SetUp() override {
    if (!ForceIsa(std::get<0>(GetParam()))) GTEST_SKIP() << "CPU lacks this ISA";
  }
  void TearDown() override { ResetIsa(); }
};

TEST_P(GemmTest, MatchesNaiveOnOddShapes) {
  const DType dt = std::get<1>(GetParam());
  ThreadPool pool(2);
  // Both sides of each regime switch (rows below 12 or 24 tokens, tiles from
  // there), partial row blocks (T mod 6, 4 and 3) and partial token tiles.
  for (int64_t T : {1, 3, 5, 7, 11, 12, 17, 23, 24, 64, 70})
    for (int64_t rows : {1, 15, 33, 100})
      CheckGemm({dt, rows, 96, T, T % 2 ? 5 : 0, T % 3 ? 3 : 0}, &pool);
  if (dt == DType::kQ8_0) return;  // Q8_0 rows are whole blocks of 32
  for (int64_t T : {1, 5, 30})  // columns that leave a tail after the vector loops
    for (int64_t cols : {7, 100})
      CheckGemm({dt, 37, cols, T, 1, 0}, &pool);
}

TEST_P(GemmTest, MatchesNaiveOnModelShapes) {
  const DType dt = std::get<1>(GetParam());
  ThreadPool pool(2);
  for (int64_t T : {1, 2, 16, 129}) CheckGemm({dt, 259, 1024, T, 32, 1}, &pool);
  CheckGemm({dt, 64, 3584, 5, 0, 0}, &pool);
}

TEST_P(GemmTest, WithoutPoolMatchesPool) {
  const DType dt = std::get<1>(GetParam());
  CheckGemm({dt, 47, 256, 9, 1, 2}, nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, GemmTest,
    ::testing::Combine(::testing::Values(Isa::kAvx2, Isa::kAvx512),
                       ::testing::Values(DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0)),
    [](const auto& info) {
      return std::string(IsaName(std::get<0>(info.param))) + "_" +
             std::string(Info(std::get<1>(info.param)).name);
    });

TEST(EmbeddingRow, MatchesDecodeForEveryDtype) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0}) {
    for (int64_t cols : {128, 96 + (dt == DType::kQ8_0 ? 0 : 7)}) {  // 103: a scalar tail
      auto table = RandomWeights(dt, 40, cols, 3);
      std::vector<float> got(cols), want(cols);
      for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
        if (!ForceIsa(isa)) continue;
        for (int64_t id : {0, 17, 39}) {
          EmbeddingRow(table.view, id, got.data());
          naive::EmbeddingRow(table.view, id, want.data());
          EXPECT_EQ(got, want) << Info(dt).name << " id " << id;  // decoding is exact
        }
      }
      ResetIsa();
    }
  }
}

}  // namespace
}  // namespace lineage::kernels
