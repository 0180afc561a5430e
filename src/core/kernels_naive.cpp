#include "core/kernels_naive.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lineage::kernels::naive {

void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool) {
  const int64_t rows = W.rows(), cols = W.cols();
  std::vector<float> w(static_cast<size_t>(cols));
  for (int64_t o = 0; o < rows; ++o) {
    DecodeToFloat(W, o * cols, cols, w.data());
    for (int64_t t = 0; t < T; ++t) {
      double acc = 0;
      for (int64_t i = 0; i < cols; ++i) acc += static_cast<double>(w[i]) * X[t * ldx + i];
      Y[t * ldy + o] = static_cast<float>(acc);
    }
  }
}

void EmbeddingRow(const TensorView& table, int64_t id, float* out) {
  DecodeToFloat(table, id * table.cols(), table.cols(), out);
}

void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[r * n + i]) * x[r * n + i];
    double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] = static_cast<float>(x[r * n + i] * inv * (w ? w[i] : 1.0f));
  }
}

void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                        const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                        int64_t dv, float* S, float* o, int64_t ldo) {
  std::vector<double> s(S, S + dk * dv), m(static_cast<size_t>(dv));
  for (int64_t t = 0; t < T; ++t) {
    const float* qt = q + t * ldqk;
    const float* kt = k + t * ldqk;
    const float* vt = v + t * ldv;
    double decay = std::exp(static_cast<double>(g[t * ldgb]));
    for (double& x : s) x *= decay;
    for (int64_t j = 0; j < dv; ++j) {  // m = S^T k
      double acc = 0;
      for (int64_t i = 0; i < dk; ++i) acc += s[i * dv + j] * kt[i];
      m[j] = acc;
    }
    for (int64_t j = 0; j < dv; ++j) m[j] = beta[t * ldgb] * (vt[j] - m[j]);  // delta
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += kt[i] * m[j];
    for (int64_t j = 0; j < dv; ++j) {  // o = S^T q
      double acc = 0;
      for (int64_t i = 0; i < dk; ++i) acc += s[i * dv + j] * qt[i];
      o[t * ldo + j] = static_cast<float>(acc);
    }
  }
  for (int64_t i = 0; i < dk * dv; ++i) S[i] = static_cast<float>(s[i]);
}

// Spec §2.6 per chunk of n <= chunk tokens (a short last chunk is the same as
// zero padding: padded rows have k = 0, beta = 0, g = 0 and change nothing).
// (I + L)^-1 is applied by forward substitution instead of being formed.
void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                      const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                      int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk) {
  std::vector<double> s(S, S + dk * dv);
  for (int64_t c0 = 0; c0 < T; c0 += chunk) {
    const int64_t n = std::min(chunk, T - c0);
    auto Q = [&](int64_t r, int64_t i) { return static_cast<double>(q[(c0 + r) * ldqk + i]); };
    auto K = [&](int64_t r, int64_t i) { return static_cast<double>(k[(c0 + r) * ldqk + i]); };
    auto V = [&](int64_t r, int64_t j) { return static_cast<double>(v[(c0 + r) * ldv + j]); };
    auto B = [&](int64_t r) { return static_cast<double>(beta[(c0 + r) * ldgb]); };
    std::vector<double> G(n);
    for (int64_t r = 0; r < n; ++r) G[r] = (r ? G[r - 1] : 0.0) + g[(c0 + r) * ldgb];
    auto kk = [&](int64_t r, int64_t s2) {
      double acc = 0;
      for (int64_t i = 0; i < dk; ++i) acc += K(r, i) * K(s2, i);
      return acc;
    };
    // delta = U - W S, with (I + L) U = beta V and (I + L) W = beta exp(G) K.
    std::vector<double> U(n * dv), Wm(n * dk), delta(n * dv);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t j = 0; j < dv; ++j) U[r * dv + j] = B(r) * V(r, j);
      for (int64_t i = 0; i < dk; ++i) Wm[r * dk + i] = B(r) * std::exp(G[r]) * K(r, i);
      for (int64_t s2 = 0; s2 < r; ++s2) {
        double l = B(r) * kk(r, s2) * std::exp(G[r] - G[s2]);
        for (int64_t j = 0; j < dv; ++j) U[r * dv + j] -= l * U[s2 * dv + j];
        for (int64_t i = 0; i < dk; ++i) Wm[r * dk + i] -= l * Wm[s2 * dk + i];
      }
      for (int64_t j = 0; j < dv; ++j) {
        double ws = 0;
        for (int64_t i = 0; i < dk; ++i) ws += Wm[r * dk + i] * s[i * dv + j];
        delta[r * dv + j] = U[r * dv + j] - ws;
      }
    }
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t j = 0; j < dv; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < dk; ++i) acc += Q(r, i) * s[i * dv + j];
        acc *= std::exp(G[r]);
        for (int64_t s2 = 0; s2 <= r; ++s2) {
          double qk = 0;
          for (int64_t i = 0; i < dk; ++i) qk += Q(r, i) * K(s2, i);
          acc += qk * std::exp(G[r] - G[s2]) * delta[s2 * dv + j];
        }
        o[(c0 + r) * ldo + j] = static_cast<float>(acc);
      }
    }
    const double last = G[n - 1];
    for (double& x : s) x *= std::exp(last);
    for (int64_t s2 = 0; s2 < n; ++s2) {
      double d = std::exp(last - G[s2]);
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += d * K(s2, i) * delta[s2 * dv + j];
    }
  }
  for (int64_t i = 0; i < dk * dv; ++i) S[i] = static_cast<float>(s[i]);
}

float Dot(const float* a, const float* b, int64_t n) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(acc);
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void Scale(float* x, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}

void Add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void SiluMul(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(a[i] / (1.0 + std::exp(-static_cast<double>(a[i]))) * b[i]);
}

void Silu(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(x[i]))));
}

void Sigmoid(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x[i]))));
}

void Softplus(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(std::log1p(std::exp(static_cast<double>(x[i]))));
}

void Softmax(float* x, int64_t n) {
  if (n <= 0) return;
  double mx = *std::max_element(x, x + n), sum = 0;
  std::vector<double> e(n);
  for (int64_t i = 0; i < n; ++i) sum += e[i] = std::exp(x[i] - mx);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(e[i] / sum);
}

void L2Normalize(float* x, int64_t rows, int64_t n, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[r * n + i]) * x[r * n + i];
    double inv = 1.0 / std::sqrt(ss + eps);
    for (int64_t i = 0; i < n; ++i) x[r * n + i] = static_cast<float>(x[r * n + i] * inv);
  }
}

}  // namespace lineage::kernels::naive
