// Per-ISA entry points of the vector helpers; kernels.cpp dispatches to them.
// Same contracts as the functions of the same names in kernels.h.
#pragma once

#include <cstdint>

#include "core/isa.h"

namespace lineage::kernels {

#define LINEAGE_DECLARE_VECTOR_OPS(A)                                                \
  A float Dot(const float* a, const float* b, int64_t n);                              \
  A void Axpy(float a, const float* x, float* y, int64_t n);                           \
  A void Scale(float* x, float a, int64_t n);                                          \
  A void CopyStreaming(const float* src, int64_t n, float* dst);                       \
  A void Add(const float* a, const float* b, float* out, int64_t n);                   \
  A void SiluMul(const float* a, const float* b, float* out, int64_t n);               \
  A void Silu(const float* x, float* out, int64_t n);                                  \
  A void Sigmoid(const float* x, float* out, int64_t n);                               \
  A void Softplus(const float* x, float* out, int64_t n);                              \
  A void Softmax(float* x, int64_t n);                                                 \
  A void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y); \
  A void L2Normalize(float* x, int64_t rows, int64_t n, float eps);

namespace avx2 {
LINEAGE_DECLARE_VECTOR_OPS()
}
namespace avx512 {
LINEAGE_DECLARE_VECTOR_OPS(LINEAGE_AVX512)
}

#undef LINEAGE_DECLARE_VECTOR_OPS

}  // namespace lineage::kernels
