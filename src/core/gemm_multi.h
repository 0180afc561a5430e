// GemmMulti: several weight matrices applied to the same activation rows,
// Y_i = X W_i^T for each target i, as one piece of work for the pool.
//
// Decode multiplies one row (or a few) by a layer's sibling projections
// (GDN q|k|v, z, b, a; FFN gate and up; attention q, k, v). Each is a stream
// over its weights, memory-bound; run one by one they would pay one pool
// barrier each. Here, for few rows, the activations are prepared once per
// dtype, the targets' rows are cut into chunks of about equal bytes, each
// thread claims the chunks of its own contiguous share in order, then what
// is left of the others' shares: one barrier per call, contiguous streams on
// a quiet machine, and a thread the OS deschedules holds back at most the
// chunk it is in. For many rows each target goes to kernels::Gemm (the
// tiled regime).
//
// Same results as kernels::Gemm on each target (same kernels, same
// summation order per output). Thread-safety as kernels::Gemm.
#pragma once

#include <cstdint>
#include <span>

#include "core/tensor_view.h"
#include "core/thread_pool.h"

namespace lineage::kernels {

struct GemmTarget {
  const TensorView* w;  // [out, in]: any DType (as kernels::Gemm)
  float* y;             // [T, ldy], ldy >= w->rows()
  int64_t ldy;
};

// REQUIRES: every target has the same number of columns, <= ldx; outputs
// do not overlap each other or X.
void GemmMulti(std::span<const GemmTarget> targets, const float* X, int64_t ldx, int64_t T, ThreadPool* pool);

}  // namespace lineage::kernels
