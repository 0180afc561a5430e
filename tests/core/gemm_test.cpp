// Gemm against naive::Gemm for every dtype, both ISA paths, odd shapes and
// strides, within the error bound of gemm_check.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels.h"
#include "core/kernels_naive.h"
#include "gemm_check.h"
#include "random_weights.h"

namespace lineage::kernels {
namespace {

using testing::RandomActivations;
using testing::ExpectNearNaiveGemm;
using testing::ExpectRowResultsIndependentOfRangeAndTokens;
using testing::RandomWeights;

struct GemmCase {
  DType dtype;
  int64_t rows, cols, T, ldx_pad, ldy_pad;
};

// `cols` rounded up to whole blocks of `dt` (96 becomes 256 for the K-quants).
int64_t WholeBlocks(DType dt, int64_t cols) {
  const int64_t b = Info(dt).block_elements;
  return (cols + b - 1) / b * b;
}

void CheckGemm(GemmCase c, ThreadPool* pool) {
  c.cols = WholeBlocks(c.dtype, c.cols);
  auto w = RandomWeights(c.dtype, c.rows, c.cols, 17 + static_cast<uint32_t>(c.rows));
  const int64_t ldx = c.cols + c.ldx_pad, ldy = c.rows + c.ldy_pad;
  std::vector<float> x = RandomActivations(c.T * ldx, 5 + static_cast<uint32_t>(c.T));
  std::vector<float> y(static_cast<size_t>(c.T * ldy), -7.0f);
  Gemm(w.view, x.data(), ldx, y.data(), ldy, c.T, pool);
  ExpectNearNaiveGemm(w.view, x.data(), ldx, y.data(), ldy, c.T);
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
  if (IsQuantized(dt)) return;  // block rows are whole blocks
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

// Float rows: a row's result is the same bit for bit with one token (which
// on AVX2 reads rows under 4 KiB as interleaved streams,
// ForEachInterleavedGroup) as with seven (passes of several tokens and of
// one), and in a call over a sub-range, with and without a column tail, for
// rows read one after another (under 4 KiB on AVX2) and four interleaved.
// (The integer kernels: GemmInt8Test.RowResultIndependentOfRangeAndTokens.)
TEST_P(GemmTest, FloatRowResultIndependentOfRangeAndTokens) {
  const DType dt = std::get<1>(GetParam());
  if (IsQuantized(dt)) GTEST_SKIP() << "covered by gemm_int8_test";
  for (const int64_t cols : {992, 1000, 3584, 3592}) {
    const int64_t T = 7;
    auto w = RandomWeights(dt, 53, cols, 29);
    ExpectRowResultsIndependentOfRangeAndTokens(w.view, RandomActivations(T * cols, 31), 5, T);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, GemmTest,
    ::testing::Combine(::testing::Values(Isa::kAvx2, Isa::kAvx512),
                       ::testing::ValuesIn(testing::AllDTypes())),
    [](const auto& info) {
      return std::string(IsaName(std::get<0>(info.param))) + "_" +
             std::string(Info(std::get<1>(info.param)).name);
    });

// ExactQ8(): Q8_0 weights against fp32 activations, within the fp32
// summation bound alone (no int8 term) of the dequantize-then-multiply
// reference, in both regimes (rows through GemmMulti, tiles) and both ISAs.
class GemmExactQ8Test : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!ForceIsa(GetParam())) GTEST_SKIP() << "CPU lacks this ISA";
    SetExactQ8(true);
  }
  void TearDown() override {
    SetExactQ8(false);
    ResetIsa();
  }
};

TEST_P(GemmExactQ8Test, MatchesNaiveWithinFp32Summation) {
  ThreadPool pool(2);
  for (int64_t T : {1, 3, 5, 7, 11, 12, 17, 24, 70})
    for (int64_t rows : {1, 15, 33, 100}) CheckGemm({DType::kQ8_0, rows, 96, T, T % 2 ? 5 : 0, T % 3 ? 3 : 0}, &pool);
  for (int64_t T : {1, 2, 16, 129}) CheckGemm({DType::kQ8_0, 259, 1024, T, 32, 1}, &pool);
  CheckGemm({DType::kQ8_0, 47, 256, 9, 1, 2}, nullptr);
}

// The switch is live: the default (int8 activations) path gives a different
// result from the exact one on the same inputs, in the rows regime and in
// the integer tiles where Q8_0 takes them (VNNI: AVX-512 or AVX-VNNI; plain
// AVX2 tiles decode Q8_0 to fp32 in either mode).
TEST_P(GemmExactQ8Test, DefaultPathDiffers) {
  auto w = RandomWeights(DType::kQ8_0, 64, 256, 3);
  for (int64_t T : {2, 40}) {
    if (T == 40 && GetParam() == Isa::kAvx2 && !AvxVnni()) continue;  // tiled: fp32 on plain AVX2 either way
    std::vector<float> x = RandomActivations(T * 256, 11);
    std::vector<float> exact(static_cast<size_t>(T * 64)), fast(exact.size());
    Gemm(w.view, x.data(), 256, exact.data(), 64, T, nullptr);
    SetExactQ8(false);
    Gemm(w.view, x.data(), 256, fast.data(), 64, T, nullptr);
    SetExactQ8(true);
    EXPECT_NE(exact, fast) << "T=" << T;
  }
}

INSTANTIATE_TEST_SUITE_P(BothIsas, GemmExactQ8Test, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

TEST(EmbeddingRow, MatchesDecodeForEveryDtype) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType dt = static_cast<DType>(i);
    for (int64_t cols : {WholeBlocks(dt, 128), WholeBlocks(dt, 96) + (IsQuantized(dt) ? 0 : 7)}) {  // 103: a scalar tail
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
