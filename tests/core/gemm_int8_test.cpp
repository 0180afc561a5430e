// The integer (int8-activation) decode kernels against the exact fp32 path
// (SetExactQ8(true)) of the same Gemm, on random blocks, both ISAs.
//
// The int8 rounding of X moves each output by at most
// sum_b d_b / 2 * sum_{i in b} |w_i| (gemm_check.h's bound, which
// GemmTest.AllPaths applies against naive::Gemm); here the measured error is
// also stated as a fraction of sum_i |w_i x_i|: with Normal activations
// (and 8x outliers) over 1024 columns it measured at most 0.21% for Q8_0
// and 0.16% for Q4_0 (blocks of 32) and 0.47-0.58% for the super-block types (blocks of 256, a
// coarser scale), mean 0.04% and 0.1%; kRelTolerance leaves 2x margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/gemm_internal.h"
#include "core/kernels.h"
#include "gemm_check.h"
#include "random_weights.h"

namespace lineage::kernels {
namespace {

using testing::ExpectRowResultsIndependentOfRangeAndTokens;
using testing::RandomActivations;
using testing::RandomWeights;

// The kernel paths: AVX2 with and without AVX-VNNI, AVX-512.
enum class Path { kAvx2, kAvx2Vnni, kAvx512 };
const char* PathName(Path p) { return p == Path::kAvx2 ? "avx2" : p == Path::kAvx2Vnni ? "avx2vnni" : "avx512"; }

// Whether `dt` takes the integer tiles on `path` (gemm_internal.h): every
// block type with vpdpbusd; without it, the types whose codes keep
// vpmaddubsw's int16 pair sums exact.
bool IntTiles(Path path, DType dt) {
  return path != Path::kAvx2 || (dt != DType::kQ8_0 && dt != DType::kIQ4_NL && dt != DType::kIQ4_XS);
}

class GemmInt8Test : public ::testing::TestWithParam<std::tuple<Path, DType>> {
 protected:
  void SetUp() override {
    const Path path = std::get<0>(GetParam());
    if (!ForceIsa(path == Path::kAvx512 ? Isa::kAvx512 : Isa::kAvx2) || !ForceAvxVnni(path == Path::kAvx2Vnni))
      GTEST_SKIP() << "CPU lacks this ISA";
  }
  void TearDown() override {
    SetExactQ8(false);
    ResetIsa();
  }
};

constexpr double kRelTolerance = 0.012;

// |got - exact| / sum_i |w_i x_i| for each token t < T and row o < rows
// (wrow: W decoded, row-major; Y rows ldy apart).
std::vector<double> RelativeErrors(const std::vector<float>& wrow, const std::vector<float>& x, int64_t ldx,
                                   const std::vector<float>& got, const std::vector<float>& exact, int64_t ldy,
                                   int64_t T, int64_t rows) {
  const int64_t cols = static_cast<int64_t>(wrow.size()) / rows;
  std::vector<double> out;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t o = 0; o < rows; ++o) {
      double abs_sum = 0;
      for (int64_t i = 0; i < cols; ++i) abs_sum += std::fabs(static_cast<double>(wrow[o * cols + i]) * x[t * ldx + i]);
      out.push_back(std::fabs(static_cast<double>(got[t * ldy + o]) - exact[t * ldy + o]) / abs_sum);
    }
  return out;
}

double Worst(const std::vector<double>& errors) { return *std::max_element(errors.begin(), errors.end()); }

TEST_P(GemmInt8Test, NearExactPathOnRandomBlocks) {
  const DType dt = std::get<1>(GetParam());
  ASSERT_EQ(Int8ActivationBlock(dt), Info(dt).block_elements);
  ThreadPool pool(2);
  const int64_t rows = 67, cols = 1024;
  auto w = RandomWeights(dt, rows, cols, 11);
  std::vector<float> wrow(static_cast<size_t>(rows * cols));
  DecodeToFloat(w.view, 0, rows * cols, wrow.data());
  double worst = 0, mean = 0;
  int64_t n = 0;
  for (int64_t T : {1, 2, 3, 4, 5, 7}) {
    const int64_t ldx = cols + 3;
    std::vector<float> x = RandomActivations(T * ldx, 100 + static_cast<uint32_t>(T));
    std::vector<float> fast(static_cast<size_t>(T * rows)), exact(fast.size());
    SetExactQ8(true);
    Gemm(w.view, x.data(), ldx, exact.data(), rows, T, &pool);
    SetExactQ8(false);
    Gemm(w.view, x.data(), ldx, fast.data(), rows, T, &pool);
    EXPECT_NE(fast, exact) << "T=" << T << ": the default path is the exact one";
    for (double rel : RelativeErrors(wrow, x, ldx, fast, exact, rows, T, rows)) {
      worst = std::max(worst, rel);
      mean += rel, ++n;
    }
  }
  EXPECT_LE(worst, kRelTolerance);
  std::printf("  %s %s: |int8 - exact| / sum|w x|: max %.2g, mean %.2g\n", PathName(std::get<0>(GetParam())),
              std::string(Info(dt).name).c_str(), worst, mean / static_cast<double>(n));
}

// Activations that int8 holds exactly (integers times 0.01, each block
// reaching +-127): the integer path then equals the exact one up to fp32
// rounding, zero points included (Q4_K / Q5_K minimums, Q6_K's -32, IQ4_XS's
// signed codes), and a block of zeros (scale 0) contributes nothing.
TEST_P(GemmInt8Test, ExactWhenActivationsAreInt8) {
  const DType dt = std::get<1>(GetParam());
  const int64_t rows = 9, cols = 768;
  auto w = RandomWeights(dt, rows, cols, 5);
  std::vector<float> wrow(static_cast<size_t>(rows * cols));
  DecodeToFloat(w.view, 0, rows * cols, wrow.data());
  std::vector<float> x(cols, 0.0f);
  for (int64_t i = 256; i < cols; ++i) x[i] = static_cast<float>((i * 37) % 255 - 127) * 0.01f;
  for (int64_t b = 256; b < cols; b += 32) x[b] = (b / 32) % 2 ? 1.27f : -1.27f;
  std::vector<float> exact(rows), y(rows);
  SetExactQ8(true);
  Gemm(w.view, x.data(), cols, exact.data(), rows, 1, nullptr);
  SetExactQ8(false);
  Gemm(w.view, x.data(), cols, y.data(), rows, 1, nullptr);
  for (int64_t o = 0; o < rows; ++o) {
    double abs_sum = 0;
    for (int64_t i = 0; i < cols; ++i) abs_sum += std::fabs(static_cast<double>(wrow[o * cols + i]) * x[i]);
    EXPECT_NEAR(y[o], exact[o], 1e-5 * abs_sum) << "row " << o;
  }
}

// The tile regime (T >= 24, prefill): the integer tiles (IntTiles) run
// against activations quantised per 32 (a finer scale than the rows' 256
// for the super-block types), within the same tolerance of the exact path;
// the other tiles decode to fp32 and equal the exact path.
TEST_P(GemmInt8Test, TilesNearExactPath) {
  const DType dt = std::get<1>(GetParam());
  const bool int_tiles = IntTiles(std::get<0>(GetParam()), dt);
  ThreadPool pool(2);
  const int64_t rows = 37, cols = 1024;
  auto w = RandomWeights(dt, rows, cols, 13);
  std::vector<float> wrow(static_cast<size_t>(rows * cols));
  DecodeToFloat(w.view, 0, rows * cols, wrow.data());
  double worst = 0;
  for (int64_t T : {24, 37, 64}) {
    const int64_t ldx = cols + 5, ldy = rows + 2;
    std::vector<float> x = RandomActivations(T * ldx, 200 + static_cast<uint32_t>(T));
    std::vector<float> fast(static_cast<size_t>(T * ldy), -7.0f), exact(fast.size(), -7.0f);
    SetExactQ8(true);
    Gemm(w.view, x.data(), ldx, exact.data(), ldy, T, &pool);
    SetExactQ8(false);
    Gemm(w.view, x.data(), ldx, fast.data(), ldy, T, &pool);
    if (int_tiles) {
      EXPECT_NE(fast, exact) << "T=" << T << ": the integer tiles did not run";
    } else {
      EXPECT_EQ(fast, exact) << "T=" << T << ": fp32 tiles in both modes";
    }
    worst = std::max(worst, Worst(RelativeErrors(wrow, x, ldx, fast, exact, ldy, T, rows)));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = rows; o < ldy; ++o) ASSERT_EQ(fast[t * ldy + o], -7.0f) << "padding written";
  }
  EXPECT_LE(worst, kRelTolerance);
  std::printf("  %s %s tiles: |fast - exact| / sum|w x| max %.2g\n", PathName(std::get<0>(GetParam())),
              std::string(Info(dt).name).c_str(), worst);
}

// A matrix marked for wide activations (TensorView::wide_activations: the
// recurrent layers' state inputs and read-out) takes 16-bit activations in
// the integer tiles, the high and low byte planes into one integer sum:
// within 16-bit rounding of the exact path (d = max|x| / 32767 per 32, about
// 1/258 of the int8 error; measured 5e-6 to 1.2e-5 of sum|w x| here against
// 1.5e-3 to 2.6e-3 on int8 activations, every type and ISA), at least 50x
// closer than the same call on int8 activations.
TEST_P(GemmInt8Test, TilesWithWideActivationsNearExactPath) {
  const DType dt = std::get<1>(GetParam());
  const bool int_tiles = IntTiles(std::get<0>(GetParam()), dt);
  ThreadPool pool(2);
  const int64_t rows = 37, cols = 1024, T = 37, ldx = cols + 3, ldy = rows + 1;
  auto w = RandomWeights(dt, rows, cols, 29);
  std::vector<float> wrow(static_cast<size_t>(rows * cols));
  DecodeToFloat(w.view, 0, rows * cols, wrow.data());
  std::vector<float> x = RandomActivations(T * ldx, 311);
  std::vector<float> exact(static_cast<size_t>(T * ldy), -7.0f), narrow(exact), wide(exact);
  SetExactQ8(true);
  Gemm(w.view, x.data(), ldx, exact.data(), ldy, T, &pool);
  SetExactQ8(false);
  Gemm(w.view, x.data(), ldx, narrow.data(), ldy, T, &pool);
  const TensorView marked = WithWideActivations(w.view);
  Gemm(marked, x.data(), ldx, wide.data(), ldy, T, &pool);
  for (int64_t t = 0; t < T; ++t) ASSERT_EQ(wide[t * ldy + rows], -7.0f) << "padding written";
  const double worst_wide = Worst(RelativeErrors(wrow, x, ldx, wide, exact, ldy, T, rows));
  const double worst_narrow = Worst(RelativeErrors(wrow, x, ldx, narrow, exact, ldy, T, rows));
  if (!int_tiles) {
    EXPECT_EQ(wide, exact) << "fp32 tiles whatever the activations' mark";
    return;
  }
  EXPECT_LE(worst_wide, 1e-4);
  EXPECT_LE(worst_wide * 50, worst_narrow);
  std::printf("  %s %s wide tiles: |fast - exact| / sum|w x| max %.2g (int8: %.2g)\n",
              PathName(std::get<0>(GetParam())), std::string(Info(dt).name).c_str(), worst_wide, worst_narrow);
}

// Tiles with activations that int8 holds exactly per 32 (each block reaching
// +-1.27 in steps of 0.01): equal to the exact path up to fp32 rounding,
// biases (Q4_1, Q5_1, Q4_K and Q5_K minimums), signed codes, the per-16
// scales of Q3_K and Q6_K and Q2_K's scale and minimum per 16 included.
TEST_P(GemmInt8Test, TilesExactWhenActivationsAreInt8) {
  const DType dt = std::get<1>(GetParam());
  const int64_t rows = 21, cols = 768, T = 30;
  auto w = RandomWeights(dt, rows, cols, 7);
  std::vector<float> wrow(static_cast<size_t>(rows * cols));
  DecodeToFloat(w.view, 0, rows * cols, wrow.data());
  std::vector<float> x(static_cast<size_t>(T * cols), 0.0f);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < cols; ++i) x[t * cols + i] = static_cast<float>((i * 37 + t * 11) % 255 - 127) * 0.01f;
    for (int64_t b = 0; b < cols; b += 32) x[t * cols + b] = (b / 32 + t) % 2 ? 1.27f : -1.27f;
  }
  std::vector<float> exact(static_cast<size_t>(T * rows)), y(exact.size());
  SetExactQ8(true);
  Gemm(w.view, x.data(), cols, exact.data(), rows, T, nullptr);
  SetExactQ8(false);
  Gemm(w.view, x.data(), cols, y.data(), rows, T, nullptr);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t o = 0; o < rows; ++o) {
      double abs_sum = 0;
      for (int64_t i = 0; i < cols; ++i) abs_sum += std::fabs(static_cast<double>(wrow[o * cols + i]) * x[t * cols + i]);
      EXPECT_NEAR(y[t * rows + o], exact[t * rows + o], 1e-5 * abs_sum) << "token " << t << " row " << o;
    }
}

// The tiles convert a block's integer sum by reading 1.5 * 2^23 + sum as a
// float and taking 1.5 * 2^23 * scale off in the scaling FMA
// (gemm_int_tiles.inc). For every sum the tiles can hold (|sum| < 2^22) and
// every scale a block type makes (an fp16 times an integer of at most 8
// bits) that is the same float as converting and multiplying.
TEST(IntTileConversion, MagicSumEqualsConvertAndMultiply) {
  uint32_t x = 99;
  auto next = [&x] { return x = x * 1664525u + 1013904223u; };
  for (int i = 0; i < 200000; ++i) {
    const int32_t sum = static_cast<int32_t>(next() % (1u << 23)) - (1 << 22);
    uint16_t h = static_cast<uint16_t>(next() >> 16);
    if ((h & 0x7c00) == 0x7c00) h &= 0x3fff;  // no inf or nan
    const float scale = HalfToFloat(h) * static_cast<float>(static_cast<int32_t>(next() % 256) - 128);
    float read;
    const int32_t bits = kIntTileMagicBits + sum;
    std::memcpy(&read, &bits, 4);
    const float magic = std::fmaf(read, scale, -kIntTileMagic * scale);
    const float direct = static_cast<float>(sum) * scale;
    ASSERT_EQ(magic, direct) << "sum " << sum << " scale " << scale;
  }
}

// A row's result does not depend on the rows of its call nor on the tokens
// (gemm_check.h).
// T = 5: one pass of five on AVX-512 (a step verifying four drafts); 7 and
// 11: passes of 4 and 3, and 4, 4 and 3.
TEST_P(GemmInt8Test, RowResultIndependentOfRangeAndTokens) {
  const DType dt = std::get<1>(GetParam());
  const int64_t rows = 53, cols = 1024;
  auto w = RandomWeights(dt, rows, cols, 17);
  for (int64_t T : {5, 7, 11})
    ExpectRowResultsIndependentOfRangeAndTokens(w.view, RandomActivations(T * cols, 23 + static_cast<uint32_t>(T)), 5, T);
}

INSTANTIATE_TEST_SUITE_P(
    IntKernels, GemmInt8Test,
    ::testing::Combine(::testing::Values(Path::kAvx2, Path::kAvx2Vnni, Path::kAvx512),
                       ::testing::ValuesIn(testing::QuantizedDTypes())),
    [](const auto& info) {
      return std::string(PathName(std::get<0>(info.param))) + "_" + std::string(Info(std::get<1>(info.param)).name);
    });

}  // namespace
}  // namespace lineage::kernels
