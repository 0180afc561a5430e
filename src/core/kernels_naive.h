// Scalar reference kernels: the specification and test oracle of kernels.h.
//
// Same signatures and contracts as lineage::kernels, written for clarity:
// weights are decoded with DecodeToFloat, sums are accumulated in double, the
// exponentials are the libm ones. Never used on the hot path.
#pragma once

#include <cstdint>

#include "core/tensor_view.h"
#include "core/thread_pool.h"

namespace lineage::kernels::naive {

void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool);
void EmbeddingRow(const TensorView& table, int64_t id, float* out);
void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y);

void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                        const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                        int64_t dv, float* S, float* o, int64_t ldo);
void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                      const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                      int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk = 64);

float Dot(const float* a, const float* b, int64_t n);
void Axpy(float a, const float* x, float* y, int64_t n);
void Scale(float* x, float a, int64_t n);
void Add(const float* a, const float* b, float* out, int64_t n);
void SiluMul(const float* a, const float* b, float* out, int64_t n);
void Silu(const float* x, float* out, int64_t n);
void Sigmoid(const float* x, float* out, int64_t n);
void Softplus(const float* x, float* out, int64_t n);
void Softmax(float* x, int64_t n);
void L2Normalize(float* x, int64_t rows, int64_t n, float eps);

}  // namespace lineage::kernels::naive
