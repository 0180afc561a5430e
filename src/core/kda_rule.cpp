#include "core/kda_rule.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/kernels.h"

namespace lineage::kernels {
namespace {

// out[i] = a[i] * b[i]. AVX2 by hand: -O2 leaves loops of unknown length scalar.
void Mul(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) out[i] = a[i] * b[i];
}

void ExpInto(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i]);
}

}  // namespace

void KdaRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, const float* g,
                  int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, int64_t dv, float* S, float* o,
                  int64_t ldo) {
  thread_local std::vector<float> decay, u;
  decay.resize(static_cast<size_t>(dk));
  u.resize(static_cast<size_t>(dv));
  for (int64_t t = 0; t < T; ++t) {
    const float* qt = q + t * ldqk;
    const float* kt = k + t * ldqk;
    ExpInto(g + t * ldg, decay.data(), dk);
    std::fill(u.begin(), u.end(), 0.0f);
    for (int64_t i = 0; i < dk; ++i) {  // decay row i, then u = S^T k
      Scale(S + i * dv, decay[i], dv);
      Axpy(kt[i], S + i * dv, u.data(), dv);
    }
    const float b = beta[t * ldb];
    const float* vt = v + t * ldv;
    for (int64_t j = 0; j < dv; ++j) u[j] = b * (vt[j] - u[j]);  // delta
    float* ot = o + t * ldo;
    std::memset(ot, 0, static_cast<size_t>(dv) * 4);
    for (int64_t i = 0; i < dk; ++i) {
      Axpy(kt[i], u.data(), S + i * dv, dv);
      Axpy(qt[i], S + i * dv, ot, dv);
    }
  }
}

void KdaChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, const float* g,
                int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, int64_t dv, float* S, float* o,
                int64_t ldo, int64_t chunk) {
  thread_local std::vector<float> step, cum, last, e, tmp, A, B, W;
  const int64_t C = std::max<int64_t>(1, chunk);
  step.resize(static_cast<size_t>(C * dk));  // exp(g_t): per-token decays
  cum.resize(static_cast<size_t>(C * dk));   // exp(G_t): decay since the chunk's start
  last.resize(static_cast<size_t>(C * dk));  // exp(G_end - G_s): decay from s to the chunk's end
  e.resize(static_cast<size_t>(dk));
  tmp.resize(static_cast<size_t>(dk));
  A.resize(static_cast<size_t>(C * C));
  B.resize(static_cast<size_t>(C * C));
  W.resize(static_cast<size_t>(C * dv));  // v_t - (exp(G_t) S)^T k_t, then delta_t
  for (int64_t c0 = 0; c0 < T; c0 += C) {
    const int64_t n = std::min(C, T - c0);
    for (int64_t t = 0; t < n; ++t) ExpInto(g + (c0 + t) * ldg, step.data() + t * dk, dk);
    // For each t, walk s down from t: e = exp(G_t - G_s) grows by one
    // factor exp(g_s) per step, so every value is a product of decays.
    for (int64_t t = 0; t < n; ++t) {
      const float* qt = q + (c0 + t) * ldqk;
      const float* kt = k + (c0 + t) * ldqk;
      std::fill(e.begin(), e.end(), 1.0f);
      for (int64_t s = t; s >= 0; --s) {
        if (t == n - 1) std::memcpy(last.data() + s * dk, e.data(), static_cast<size_t>(dk) * 4);
        Mul(e.data(), k + (c0 + s) * ldqk, tmp.data(), dk);
        B[t * C + s] = Dot(qt, tmp.data(), dk);
        A[t * C + s] = s < t ? Dot(kt, tmp.data(), dk) : 0.0f;
        Mul(e.data(), step.data() + s * dk, e.data(), dk);
      }
      std::memcpy(cum.data() + t * dk, e.data(), static_cast<size_t>(dk) * 4);
    }
    // W_t = v_t - S^T (exp(G_t) k_t) and o_t = S^T (exp(G_t) q_t), reading
    // each row of S once for the whole chunk.
    for (int64_t t = 0; t < n; ++t) {
      std::memcpy(W.data() + t * dv, v + (c0 + t) * ldv, static_cast<size_t>(dv) * 4);
      std::memset(o + (c0 + t) * ldo, 0, static_cast<size_t>(dv) * 4);
    }
    for (int64_t i = 0; i < dk; ++i) {
      const float* Si = S + i * dv;
      for (int64_t t = 0; t < n; ++t) {
        const float d = cum[t * dk + i];
        Axpy(-d * k[(c0 + t) * ldqk + i], Si, W.data() + t * dv, dv);
        Axpy(d * q[(c0 + t) * ldqk + i], Si, o + (c0 + t) * ldo, dv);
      }
    }
    // delta_t = beta_t (W_t - sum_{s<t} A[t,s] delta_s), in place in W.
    for (int64_t t = 0; t < n; ++t) {
      float* wt = W.data() + t * dv;
      for (int64_t s = 0; s < t; ++s) Axpy(-A[t * C + s], W.data() + s * dv, wt, dv);
      Scale(wt, beta[(c0 + t) * ldb], dv);
      float* ot = o + (c0 + t) * ldo;
      for (int64_t s = 0; s <= t; ++s) Axpy(B[t * C + s], W.data() + s * dv, ot, dv);
    }
    // S <- diag(exp(G_end)) S + sum_s diag(exp(G_end - G_s)) k_s delta_s^T.
    for (int64_t i = 0; i < dk; ++i) {
      float* Si = S + i * dv;
      Scale(Si, cum[(n - 1) * dk + i], dv);
      for (int64_t s = 0; s < n; ++s) Axpy(last[s * dk + i] * k[(c0 + s) * ldqk + i], W.data() + s * dv, Si, dv);
    }
  }
}

}  // namespace lineage::kernels
