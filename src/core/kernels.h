// Hot kernels of the forward pass. Every function here has a plain scalar
// definition (kernels_naive.cpp) that is its specification and test oracle,
// and a fast path (AVX-512 where the CPU has it, AVX2+FMA otherwise) chosen
// at run time.
//
// Layouts: activations are fp32, row-major, one row per token. Weights are
// TensorViews [out, in] in any supported dtype. `pool` may be null (one thread).
#pragma once

#include <cstdint>

#include "core/tensor_view.h"
#include "core/thread_pool.h"

namespace lineage::kernels {

// Y[t, o] = sum_i W[o, i] * X[t, i]  for t < T, o < W.rows().
// X: [T, ldx] with ldx >= W.cols(); Y: [T, ldy] with ldy >= W.rows().
void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool);

// Row `id` of an embedding table [V, H] decoded to fp32: out[H].
void EmbeddingRow(const TensorView& table, int64_t id, float* out);

// y = x * rsqrt(mean(x^2) + eps) * w, for each of `rows` rows of length n.
void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y);

// Causal GQA softmax attention for a run of new queries against a paged KV.
// See attention.h for the paged layout; declared there to keep this file small.

// Gated delta rule, one value head, sequential recurrence over T tokens:
//   S <- exp(g_t) S;  S <- S + k_t (beta_t (v_t - S^T k_t))^T;  o_t = S^T q_t
// q, k: [T, dk] (q already scaled), v: [T, dv], g, beta: [T], S: [dk, dv] in/out,
// o: [T, dv]. Row strides are given so heads can be read in place.
void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                        const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                        int64_t dv, float* S, float* o, int64_t ldo);

// The same result computed in chunks of `chunk` tokens (the WY / UT form of
// spec §2.6). Equal to DeltaRuleRecurrent up to float rounding.
void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                      const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                      int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk = 64);

}  // namespace lineage::kernels
