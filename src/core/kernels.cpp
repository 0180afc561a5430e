// First, simple versions: correct and parallel, not yet tuned.
#include "core/kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels_naive.h"

namespace lineage::kernels {

void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool) {
  const int64_t rows = W.rows(), cols = W.cols();
  auto body = [&](int64_t begin, int64_t end, int) {
    std::vector<float> w(static_cast<size_t>(cols));
    for (int64_t o = begin; o < end; ++o) {
      DecodeToFloat(W, o * cols, cols, w.data());
      for (int64_t t = 0; t < T; ++t) {
        const float* x = X + t * ldx;
        float acc = 0;
        for (int64_t i = 0; i < cols; ++i) acc += w[i] * x[i];
        Y[t * ldy + o] = acc;
      }
    }
  };
  if (pool) {
    pool->parallel_for(rows, body, 16);
  } else {
    body(0, rows, 0);
  }
}

void EmbeddingRow(const TensorView& table, int64_t id, float* out) {
  DecodeToFloat(table, id * table.cols(), table.cols(), out);
}

void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y) {
  naive::RmsNorm(x, w, eps, rows, n, y);
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

float Dot(const float* a, const float* b, int64_t n) { return naive::Dot(a, b, n); }
void Axpy(float a, const float* x, float* y, int64_t n) { naive::Axpy(a, x, y, n); }
void Scale(float* x, float a, int64_t n) { naive::Scale(x, a, n); }
void Add(const float* a, const float* b, float* out, int64_t n) { naive::Add(a, b, out, n); }
void SiluMul(const float* a, const float* b, float* out, int64_t n) { naive::SiluMul(a, b, out, n); }
void Silu(const float* x, float* out, int64_t n) { naive::Silu(x, out, n); }
void Sigmoid(const float* x, float* out, int64_t n) { naive::Sigmoid(x, out, n); }
void Softmax(float* x, int64_t n) { naive::Softmax(x, n); }
void L2Normalize(float* x, int64_t rows, int64_t n, float eps) { naive::L2Normalize(x, rows, n, eps); }

}  // namespace lineage::kernels
