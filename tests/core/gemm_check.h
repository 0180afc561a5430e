// Test helper: checks a Gemm result against naive::Gemm with a per-output
// error bound derived from the documented precision of each path (see
// kernels.h):
//   |Y - Y_ref| <= (cols * 2^-24 * 2) * sum|w x|            fp32 summation, 2x margin
//                + sum_b (max|x_b| / 127) * 0.51 * sum_b|w|  the types with int8 activations
//                                        outside ExactQ8(), blocks b of
//                                        kernels::Int8ActivationBlock() values: X is
//                                        int8-quantised (half a step, 2% margin for the
//                                        float scaling)
// An indexing or blocking bug produces errors of the order of |Y| itself,
// far above these bounds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/isa.h"
#include "core/kernels.h"
#include "core/kernels_naive.h"
#include "core/tensor_view.h"

namespace lineage::testing {

// Y[T, ldy] (the first w.rows() columns) against naive::Gemm(w, X); reports
// the first few failures.
inline void ExpectNearNaiveGemm(const TensorView& w, const float* x, int64_t ldx, const float* y, int64_t ldy,
                                int64_t T) {
  const int64_t rows = w.rows(), cols = w.cols();
  std::vector<float> ref(static_cast<size_t>(T * ldy));
  kernels::naive::Gemm(w, x, ldx, ref.data(), ldy, T, nullptr);
  const int64_t qblock = kernels::Int8ActivationBlock(w.dtype);
  const int64_t block = qblock > 0 ? qblock : 32;
  std::vector<float> wrow(static_cast<size_t>(cols));
  int64_t failures = 0;
  for (int64_t o = 0; o < rows; ++o) {
    DecodeToFloat(w, o * cols, cols, wrow.data());
    for (int64_t t = 0; t < T; ++t) {
      const float* xt = x + t * ldx;
      double abs_sum = 0, quant = 0;
      for (int64_t b = 0; b < cols; b += block) {
        double amax = 0, wsum = 0;
        for (int64_t i = b; i < std::min(b + block, cols); ++i) {
          abs_sum += std::fabs(static_cast<double>(wrow[i]) * xt[i]);
          amax = std::max(amax, static_cast<double>(std::fabs(xt[i])));
          wsum += std::fabs(wrow[i]);
        }
        quant += amax / 127.0 * 0.51 * wsum;
      }
      double bound = 2.0 * cols * std::ldexp(1.0, -24) * abs_sum + 1e-30;
      if (qblock > 0) bound += quant;
      const double err = std::fabs(static_cast<double>(y[t * ldy + o]) - ref[t * ldy + o]);
      if (!(err <= bound) && ++failures <= 5)
        ADD_FAILURE() << Info(w.dtype).name << " rows=" << rows << " cols=" << cols << " T=" << T << " o=" << o
                      << " t=" << t << " got " << y[t * ldy + o] << " want " << ref[t * ldy + o] << " bound "
                      << bound;
    }
  }
  EXPECT_EQ(failures, 0);
}

// A row's result does not depend on which rows share its call (the kernels
// sum rows in groups and read one token's range as interleaved streams, the
// pool cuts ranges in chunks) nor on how many tokens ride along: bit for
// bit, so batched decode equals single decode. Compares one token over all
// `rows` of `w` with T tokens over them and with one token over the rows
// from `first` on.
inline void ExpectRowResultsIndependentOfRangeAndTokens(const TensorView& w, const std::vector<float>& x,
                                                        int64_t first, int64_t T) {
  const int64_t rows = w.rows(), cols = w.cols();
  std::vector<float> one(rows), many(static_cast<size_t>(T * rows)), part(rows - first);
  kernels::Gemm(w, x.data(), cols, many.data(), rows, T, nullptr);
  const int64_t row_bytes = RowBytes(w.dtype, cols);
  const TensorView tail{"tail", w.dtype, {rows - first, cols},
                        static_cast<const uint8_t*>(w.data) + first * row_bytes, (rows - first) * row_bytes};
  // Every token of the T-token call (whatever pass of the kernel it fell
  // in) against a call of that token alone.
  for (int64_t t = 0; t < T; ++t) {
    kernels::Gemm(w, x.data() + t * cols, cols, one.data(), rows, 1, nullptr);
    kernels::Gemm(tail, x.data() + t * cols, cols, part.data(), rows - first, 1, nullptr);
    for (int64_t o = 0; o < rows; ++o) {
      EXPECT_EQ(one[o], many[t * rows + o]) << "cols " << cols << " token " << t << " of " << T << " row " << o;
      if (o >= first) {
        EXPECT_EQ(one[o], part[o - first]) << "cols " << cols << " row " << o;
      }
    }
  }
}

}  // namespace lineage::testing
