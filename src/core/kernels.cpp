// Dispatch of the kernels.h entry points to the AVX2 or AVX-512 versions.
#include "core/kernels.h"

#include "core/delta_rule_internal.h"
#include "core/gemm_internal.h"
#include "core/kda_rule.h"
#include "core/vector_ops.h"

namespace lineage::kernels {

#define LINEAGE_DISPATCH(fn, ...) \
  (ActiveIsa() == Isa::kAvx512 ? avx512::fn(__VA_ARGS__) : avx2::fn(__VA_ARGS__))

void EmbeddingRow(const TensorView& table, int64_t id, float* out) {
  LINEAGE_DISPATCH(DecodeRowF32, table, id, out);
}

void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y) {
  LINEAGE_DISPATCH(RmsNorm, x, w, eps, rows, n, y);
}

void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                        const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                        int64_t dv, float* S, float* o, int64_t ldo, const RecurrentOutputs& out) {
  LINEAGE_DISPATCH(DeltaRuleRecurrent, q, k, ldqk, v, ldv, g, beta, ldgb, T, dk, dv, S, o, ldo, out);
}

void DeltaRuleReplay(const float* log, int64_t n, int64_t dk, int64_t dv, float* S) {
  LINEAGE_DISPATCH(DeltaRuleReplay, log, n, dk, dv, S);
}

void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                      const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                      int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk) {
  LINEAGE_DISPATCH(DeltaRuleChunked, q, k, ldqk, v, ldv, g, beta, ldgb, T, dk, dv, S, o, ldo, chunk);
}

void KdaRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, const float* g,
                  int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, int64_t dv, float* S, float* o,
                  int64_t ldo, const RecurrentOutputs& out) {
  LINEAGE_DISPATCH(KdaRecurrent, q, k, ldqk, v, ldv, g, ldg, beta, ldb, T, dk, dv, S, o, ldo, out);
}

void KdaChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, const float* g,
                int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, int64_t dv, float* S, float* o,
                int64_t ldo, int64_t chunk) {
  LINEAGE_DISPATCH(KdaChunked, q, k, ldqk, v, ldv, g, ldg, beta, ldb, T, dk, dv, S, o, ldo, chunk);
}

float Dot(const float* a, const float* b, int64_t n) { return LINEAGE_DISPATCH(Dot, a, b, n); }
void Axpy(float a, const float* x, float* y, int64_t n) { LINEAGE_DISPATCH(Axpy, a, x, y, n); }
void Scale(float* x, float a, int64_t n) { LINEAGE_DISPATCH(Scale, x, a, n); }
void CopyStreaming(const float* src, int64_t n, float* dst) { LINEAGE_DISPATCH(CopyStreaming, src, n, dst); }
void Add(const float* a, const float* b, float* out, int64_t n) { LINEAGE_DISPATCH(Add, a, b, out, n); }
void SiluMul(const float* a, const float* b, float* out, int64_t n) {
  LINEAGE_DISPATCH(SiluMul, a, b, out, n);
}
void Silu(const float* x, float* out, int64_t n) { LINEAGE_DISPATCH(Silu, x, out, n); }
void Sigmoid(const float* x, float* out, int64_t n) { LINEAGE_DISPATCH(Sigmoid, x, out, n); }
void Softplus(const float* x, float* out, int64_t n) { LINEAGE_DISPATCH(Softplus, x, out, n); }
void Softmax(float* x, int64_t n) { LINEAGE_DISPATCH(Softmax, x, n); }
void L2Normalize(float* x, int64_t rows, int64_t n, float eps) {
  LINEAGE_DISPATCH(L2Normalize, x, rows, n, eps);
}

}  // namespace lineage::kernels
