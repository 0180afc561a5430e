// MultiGemm: several projections of the same input rows in one pass over the
// thread pool: Y_i = X W_i^T for each (W_i, Y_i). A layer's sibling
// projections (GDN q|k|v, z, b, a; FFN gate and up; attention q, k, v) go
// through it so that decode pays one pool barrier per layer input, not one
// per projection; see kernels::GemmMulti (core/gemm_multi.h) for how.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "core/tensor_view.h"
#include "core/thread_pool.h"

namespace lineage::engine {

struct GemmOut {
  const TensorView* w;  // [out, in]
  float* y;             // [T, ldy]
  int64_t ldy;
};

// REQUIRES: every W has the same number of columns, <= ldx.
void MultiGemm(std::initializer_list<GemmOut> outs, const float* x, int64_t ldx, int64_t T, ThreadPool* pool);

}  // namespace lineage::engine
