// Lane order (core/lane_order.h): the layout puts one sub-block in each
// 32-bit lane, the move is lossless, and the lane-order row kernels compute
// the same integer sums as the file-order ones, on both ISAs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/dequant.h"
#include "core/isa.h"
#include "core/kernels.h"
#include "core/lane_order.h"
#include "core/thread_pool.h"
#include "random_weights.h"

namespace lineage::quant {
namespace {

// The point of the layout, stated apart from the tables: every byte of lane
// i of every register belongs to one sub-block (Q6_K: i, of 16 elements;
// Q4_K: i mod 8, of 32), and the 256 positions are 256 distinct elements.
TEST(LaneOrder, EachLaneHoldsOneSubBlock) {
  for (DType t : {DType::kQ6_K_LANES, DType::kQ4_K_LANES}) {
    const int sub = t == DType::kQ6_K_LANES ? 16 : 32, blocks_per_lane_set = t == DType::kQ6_K_LANES ? 16 : 8;
    std::vector<int> seen(256, 0);
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 4; ++j) {
          const int e = LaneElement(t, r, i, j);
          ASSERT_GE(e, 0);
          ASSERT_LT(e, 256);
          ++seen[e];
          EXPECT_EQ(e / sub, i % blocks_per_lane_set) << Info(t).name << " r " << r << " lane " << i;
        }
    for (int e = 0; e < 256; ++e) EXPECT_EQ(seen[e], 1) << Info(t).name << " element " << e;
  }
}

// To lane order and back gives the file block byte for byte; in place too.
TEST(LaneOrder, RoundTripIsExact) {
  for (DType file : {DType::kQ4_K, DType::kQ6_K}) {
    const DType lanes = LaneTypeOf(file);
    auto w = testing::RandomWeights(file, 8, 1024, 17);
    const int64_t blocks = static_cast<int64_t>(w.bytes.size()) / Info(file).block_bytes;
    std::vector<uint8_t> moved(w.bytes.size()), back(w.bytes.size());
    ToLaneOrder(file, w.bytes.data(), blocks, moved.data());
    EXPECT_NE(moved, w.bytes) << Info(file).name << ": the codes did not move";
    FromLaneOrder(lanes, moved.data(), blocks, back.data());
    EXPECT_EQ(back, w.bytes) << Info(file).name;
    std::vector<uint8_t> in_place = w.bytes;
    ToLaneOrder(file, in_place.data(), blocks, in_place.data());
    EXPECT_EQ(in_place, moved) << Info(file).name;
  }
}

// Where a code lands, checked on one element without the tables: a Q6_K
// block whose codes are all 0 but element e's (63, the largest) decodes in
// lane order to a block with only element e nonzero, for every e.
TEST(LaneOrder, OneCodeStaysWithItsElement) {
  auto w = testing::RandomWeights(DType::kQ6_K, 1, 256, 3);
  auto& b = *reinterpret_cast<BlockQ6_K*>(w.bytes.data());
  for (int e = 0; e < 256; e += 7) {
    std::memset(b.ql, 0, sizeof b.ql);
    std::memset(b.qh, 0, sizeof b.qh);
    // docs/model-files.md: element 128h + 32m + l, low nibble in ql[64h +
    // 32(m % 2) + l] (m < 2 low, else high), top bits at 2m of qh[32h + l].
    const int h = e / 128, m = e % 128 / 32, l = e % 32;
    b.ql[64 * h + 32 * (m % 2) + l] = m < 2 ? 15 : 15 << 4;
    b.qh[32 * h + l] = static_cast<uint8_t>(3 << (2 * m));
    std::vector<uint8_t> lanes(w.bytes.size());
    ToLaneOrder(DType::kQ6_K, w.bytes.data(), 1, lanes.data());
    float file_y[256], lane_y[256];
    DequantizeBlocks(DType::kQ6_K, w.bytes.data(), 1, file_y);
    DequantizeBlocks(DType::kQ6_K_LANES, lanes.data(), 1, lane_y);
    for (int k = 0; k < 256; ++k) ASSERT_EQ(lane_y[k], file_y[k]) << "element " << e << ", position " << k;
    const float big = file_y[e];
    for (int k = 0; k < 256; ++k) {
      if (k != e) {
        ASSERT_NE(file_y[k], big) << "element " << e << " is not the only large code";
      }
    }
  }
}

// The lane-order row kernels against the file-order ones on the same
// weights: the integer sums per sub-block are the same numbers, only the
// float epilogue's order differs, so the outputs agree to float rounding
// (relative 1e-5 of the row's sum of |products|), for 1..7 tokens, on
// both ISAs.
TEST(LaneOrder, RowKernelsAgreeWithFileOrder) {
  ThreadPool pool(2);
  const int64_t rows = 37, cols = 1024;
  for (kernels::Isa isa : {kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
    if (!kernels::ForceIsa(isa)) continue;
    for (DType file : {DType::kQ4_K, DType::kQ6_K}) {
      auto w = testing::RandomWeights(file, rows, cols, 23);
      std::vector<uint8_t> moved(w.bytes.size());
      ToLaneOrder(file, w.bytes.data(), static_cast<int64_t>(w.bytes.size()) / Info(file).block_bytes, moved.data());
      TensorView lanes = w.view;
      lanes.dtype = LaneTypeOf(file);
      lanes.data = moved.data();
      for (int64_t T = 1; T <= 7; ++T) {
        const std::vector<float> X = testing::RandomActivations(T * cols, 5 + static_cast<uint32_t>(T));
        std::vector<float> want(static_cast<size_t>(T * rows)), got(want.size()), exact(want.size());
        kernels::Gemm(w.view, X.data(), cols, want.data(), rows, T, &pool);
        kernels::Gemm(lanes, X.data(), cols, got.data(), rows, T, &pool);
        kernels::SetExactQ8(true);
        kernels::Gemm(lanes, X.data(), cols, exact.data(), rows, T, &pool);
        kernels::SetExactQ8(false);
        std::vector<float> wrow(static_cast<size_t>(cols));
        for (int64_t t = 0; t < T; ++t)
          for (int64_t r = 0; r < rows; ++r) {
            DecodeToFloat(w.view, r * cols, cols, wrow.data());
            double mag = 0;
            for (int64_t c = 0; c < cols; ++c) mag += std::fabs(wrow[c] * X[t * cols + c]);
            const size_t at = static_cast<size_t>(t * rows + r);
            EXPECT_NEAR(got[at], want[at], 1e-5 * mag) << Info(file).name << " " << kernels::IsaName(isa) << " T " << T;
            // And the int8 path is near the exact product (gemm_int8_test's bound).
            EXPECT_NEAR(got[at], exact[at], 0.012 * mag) << Info(file).name << " T " << T;
          }
      }
    }
  }
  kernels::ResetIsa();
}

}  // namespace
}  // namespace lineage::quant
