// GemmMulti: targets of mixed dtypes sharing one input, against naive::Gemm
// (gemm_check.h), and bit-identical to kernels::Gemm per target however the
// rows are cut into chunks and spread over threads.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/gemm_multi.h"
#include "core/kernels.h"
#include "gemm_check.h"
#include "random_weights.h"

namespace lineage::kernels {
namespace {

using testing::AllDTypes;
using testing::ExpectNearNaiveGemm;
using testing::OwnedTensor;
using testing::RandomActivations;
using testing::RandomWeights;

class GemmMultiTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!ForceIsa(GetParam())) GTEST_SKIP() << "CPU lacks this ISA";
  }
  void TearDown() override { ResetIsa(); }
};

// Runs GemmMulti over `weights` (all `cols` wide) and checks every target.
void CheckMulti(const std::vector<OwnedTensor>& weights, int64_t cols, int64_t T, ThreadPool* pool) {
  const int64_t ldx = cols + 3;
  std::vector<float> x = RandomActivations(T * ldx, 11 + static_cast<uint32_t>(T));
  std::vector<std::vector<float>> ys;
  std::vector<GemmTarget> targets;
  for (const OwnedTensor& w : weights) ys.emplace_back(static_cast<size_t>(T * (w.view.rows() + 2)), -7.0f);
  for (size_t i = 0; i < weights.size(); ++i) targets.push_back({&weights[i].view, ys[i].data(), weights[i].view.rows() + 2});
  GemmMulti(targets, x.data(), ldx, T, pool);
  for (size_t i = 0; i < weights.size(); ++i) {
    const TensorView& w = weights[i].view;
    const int64_t ldy = targets[i].ldy;
    SCOPED_TRACE(::testing::Message() << "target " << i << " " << Info(w.dtype).name << " rows " << w.rows()
                                      << " T " << T);
    ExpectNearNaiveGemm(w, x.data(), ldx, ys[i].data(), ldy, T);
    std::vector<float> alone(ys[i].size(), -7.0f);
    Gemm(w, x.data(), ldx, alone.data(), ldy, T, nullptr);
    EXPECT_EQ(0, std::memcmp(alone.data(), ys[i].data(), alone.size() * sizeof(float)))
        << "differs from Gemm on the target alone";
  }
}

TEST_P(GemmMultiTest, MixedDtypesMatchNaiveAndGemmAlone) {
  ThreadPool pool(2);
  for (int64_t cols : {96, 1024}) {
    std::vector<OwnedTensor> weights;
    // Big enough to be cut into many chunks, plus small and odd row counts.
    weights.push_back(RandomWeights(DType::kBF16, cols == 1024 ? 1500 : 700, cols, 1));
    weights.push_back(RandomWeights(DType::kQ8_0, 37, cols, 2));
    weights.push_back(RandomWeights(DType::kF32, 16, cols, 3));
    weights.push_back(RandomWeights(DType::kF16, 5, cols, 4));
    weights.push_back(RandomWeights(DType::kBF16, 1, cols, 5));
    // Rows for every target, then tiles for Q8_0 (T >= 12) and for all (T >= 24).
    for (int64_t T : {1, 2, 7, 13, 25}) {
      CheckMulti(weights, cols, T, &pool);
      CheckMulti(weights, cols, T, nullptr);
    }
  }
}

TEST_P(GemmMultiTest, ColumnsWithATail) {
  ThreadPool pool(2);
  std::vector<OwnedTensor> weights;
  weights.push_back(RandomWeights(DType::kBF16, 300, 103, 6));
  weights.push_back(RandomWeights(DType::kF16, 9, 103, 7));
  for (int64_t T : {1, 4}) CheckMulti(weights, 103, T, &pool);
}

// A row's result does not depend on the rows beside it: speculative
// decoding verifies 1 + k rows in one step and must see the logits a decode
// step of that row alone would (engine/speculation.h), for every block type
// and for several targets sharing the pass (a layer's sibling projections).
TEST_P(GemmMultiTest, EachRowEqualsThatRowAlone) {
  ThreadPool pool(2);
  const int64_t cols = 512;
  for (DType dtype : AllDTypes()) {
    std::vector<OwnedTensor> weights;
    for (int64_t rows : {1500, 67, 16}) weights.push_back(RandomWeights(dtype, rows, cols, static_cast<uint32_t>(rows)));
    for (int64_t T : {2, 5, 11}) {
      SCOPED_TRACE(::testing::Message() << Info(dtype).name << " T " << T);
      const std::vector<float> x = RandomActivations(T * cols, 5 + static_cast<uint32_t>(T));
      std::vector<std::vector<float>> together, alone;
      std::vector<GemmTarget> targets;
      for (const OwnedTensor& w : weights) {
        together.emplace_back(static_cast<size_t>(T * w.view.rows()));
        alone.emplace_back(static_cast<size_t>(T * w.view.rows()));
        targets.push_back({&w.view, together.back().data(), w.view.rows()});
      }
      GemmMulti(targets, x.data(), cols, T, &pool);
      for (int64_t t = 0; t < T; ++t) {
        targets.clear();
        for (size_t i = 0; i < weights.size(); ++i)
          targets.push_back({&weights[i].view, alone[i].data() + t * weights[i].view.rows(), weights[i].view.rows()});
        GemmMulti(targets, x.data() + t * cols, cols, 1, &pool);
      }
      for (size_t i = 0; i < weights.size(); ++i)
        EXPECT_EQ(0, std::memcmp(together[i].data(), alone[i].data(), together[i].size() * sizeof(float)))
            << "target " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothIsas, GemmMultiTest, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace lineage::kernels
