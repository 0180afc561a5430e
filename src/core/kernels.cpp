// First, simple versions: correct and parallel, not yet tuned.
#include "core/kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels_naive.h"
#include "core/vector_ops.h"

namespace lineage::kernels {

void EmbeddingRow(const TensorView& table, int64_t id, float* out) {
  DecodeToFloat(table, id * table.cols(), table.cols(), out);
}

#define LINEAGE_DISPATCH(fn, ...) \
  (ActiveIsa() == Isa::kAvx512 ? avx512::fn(__VA_ARGS__) : avx2::fn(__VA_ARGS__))

void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y) {
  LINEAGE_DISPATCH(RmsNorm, x, w, eps, rows, n, y);
}

void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                        const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                        int64_t dv, float* S, float* o, int64_t ldo) {
  naive::DeltaRuleRecurrent(q, k, ldqk, v, ldv, g, beta, ldgb, T, dk, dv, S, o, ldo);
}

void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                      const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                      int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk) {
  naive::DeltaRuleChunked(q, k, ldqk, v, ldv, g, beta, ldgb, T, dk, dv, S, o, ldo, chunk);
}

float Dot(const float* a, const float* b, int64_t n) { return LINEAGE_DISPATCH(Dot, a, b, n); }
void Axpy(float a, const float* x, float* y, int64_t n) { LINEAGE_DISPATCH(Axpy, a, x, y, n); }
void Scale(float* x, float a, int64_t n) { LINEAGE_DISPATCH(Scale, x, a, n); }
void Add(const float* a, const float* b, float* out, int64_t n) { LINEAGE_DISPATCH(Add, a, b, out, n); }
void SiluMul(const float* a, const float* b, float* out, int64_t n) {
  LINEAGE_DISPATCH(SiluMul, a, b, out, n);
}
void Silu(const float* x, float* out, int64_t n) { LINEAGE_DISPATCH(Silu, x, out, n); }
void Sigmoid(const float* x, float* out, int64_t n) { LINEAGE_DISPATCH(Sigmoid, x, out, n); }
void Softmax(float* x, int64_t n) { LINEAGE_DISPATCH(Softmax, x, n); }
void L2Normalize(float* x, int64_t rows, int64_t n, float eps) {
  LINEAGE_DISPATCH(L2Normalize, x, rows, n, eps);
}

}  // namespace lineage::kernels
