// Hot kernels of the forward pass. Every function here has a plain scalar
// definition (kernels_naive.cpp) that is its specification and test oracle,
// and a fast path (AVX-512 where the CPU has it, AVX2+FMA otherwise) chosen
// at run time.
//
// Layouts: activations are fp32, row-major, one row per token. Weights are
// TensorViews [out, in] in any supported dtype. `pool` may be null (one thread).
// Thread-safety: every function may run on several threads at once (scratch
// space is per thread); a call given a pool uses that pool until it returns.
// The ISA is chosen per call from ActiveIsa() (see isa.h).
#pragma once

#include <cstdint>

#include "core/isa.h"
#include "core/tensor_view.h"
#include "core/thread_pool.h"

namespace lineage::kernels {

// Y[t, o] = sum_i W[o, i] * X[t, i]  for t < T, o < W.rows().
// X: [T, ldx] with ldx >= W.cols(); Y: [T, ldy] with ldy >= W.rows().
// X and Y must not overlap. W may be any DType; for the block types cols is
// a whole number of blocks. Accuracy: fp32 summation error (at most about
// cols * 2^-24 of sum_i |W[o,i] X[t,i]|) on the exactly decoded weights; in
// addition, unless SetExactQ8(true) (core/isa.h), X is quantised to int8 per
// block of Int8ActivationBlock(W.dtype) values with scale d = max|X_block| /
// 127 (error <= d/2 per element), as GGML does, to use integer dot products:
// Q8_0 and Q4_0 per 32 (Q8_0 activations), Q4_K, Q5_K, Q6_K and IQ4_XS per 256 (Q8_K)
// in the row regime (decode, few tokens). Every other block type, and all
// of them under ExactQ8(), keeps X in fp32: the exact path the
// llama.cpp-oracle tests need. The test oracle is naive::Gemm.
void Gemm(const TensorView& W, const float* X, int64_t ldx, float* Y, int64_t ldy, int64_t T,
          ThreadPool* pool);

// The block length over which Gemm may quantise X to int8 for weights of
// `dtype` (32 or 256), or 0 when it keeps X in fp32 (ExactQ8() included).
int64_t Int8ActivationBlock(DType dtype);

// Row `id` of an embedding table [V, H] decoded to fp32: out[H].
void EmbeddingRow(const TensorView& table, int64_t id, float* out);

// y = x * rsqrt(mean(x^2) + eps) * w, for each of `rows` rows of length n.
// w may be null (no weight); y may alias x.
void RmsNorm(const float* x, const float* w, float eps, int64_t rows, int64_t n, float* y);

// Causal GQA softmax attention for a run of new queries against a paged KV.
// See attention.h for the paged layout; declared there to keep this file small.

// What a token-by-token run of the delta rule (DeltaRuleRecurrent,
// KdaRecurrent) writes besides S and o, all optional:
//  - after: T pointers; after[t], where not null, receives S after token t
//    (a capture a later step may roll back to; written past the caches),
//    at no extra read of S;
//  - from: S before the run is read from here and left as it was; S
//    (which may hold anything) receives the state after the run;
//  - log: token t's k (dk), row decays (dk) and delta (dv) at
//    log + t (2 dk + dv), for DeltaRuleReplay.
struct RecurrentOutputs {
  float* const* after = nullptr;
  const float* from = nullptr;
  float* log = nullptr;
};

// Gated delta rule, one value head, sequential recurrence over T tokens:
//   S <- exp(g_t) S;  S <- S + k_t (beta_t (v_t - S^T k_t))^T;  o_t = S^T q_t
// q, k: [T, dk] (q already scaled), v: [T, dv], g, beta: [T], S: [dk, dv] in/out,
// o: [T, dv]. Row strides are given so heads can be read in place.
void DeltaRuleRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                        const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                        int64_t dv, float* S, float* o, int64_t ldo, const RecurrentOutputs& out = {});

// A log of a run (RecurrentOutputs::log) applied again to S, its first n
// tokens: S <- diag(decay_t) S + k_t delta_t^T, the same products as the
// run, so S ends with the run's bits after n tokens (a rollback of a
// verification step to the drafts it kept).
void DeltaRuleReplay(const float* log, int64_t n, int64_t dk, int64_t dv, float* S);

// The same result computed in chunks of `chunk` tokens (the WY / UT form of
// spec §2.6), for prefill; any T >= 0 (a short last chunk is fine) and any
// initial S, so a prompt may be prefilled in pieces. Equal to
// DeltaRuleRecurrent up to float rounding: both stay within 2e-4 (measured
// ~1e-5) of a double-precision recurrence on realistic inputs (tests/core).
// For both: S and o must not overlap the inputs.
void DeltaRuleChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv,
                      const float* g, const float* beta, int64_t ldgb, int64_t T, int64_t dk,
                      int64_t dv, float* S, float* o, int64_t ldo, int64_t chunk = 64);

// Small vector helpers (n elements, no alignment required; `out` may alias
// an input). Functions built on exp use a polynomial good to ~2 ulp and stay
// within 4e-6 relative of the exact result; exp(x) for x < -87 gives ~1e-38.
float Dot(const float* a, const float* b, int64_t n);
void Axpy(float a, const float* x, float* y, int64_t n);          // y += a * x
void Scale(float* x, float a, int64_t n);                           // x *= a
// dst = src (n values, not overlapping) written past the caches: a copy
// nothing reads soon (a recurrent state captured at a position a later step
// may roll back to) costs one write of dst, not a read for ownership as
// well. Measured on a 0.8B-shape step verifying four drafts (4 x 18 MiB of
// states captured): 3-4% faster than std::copy.
void CopyStreaming(const float* src, int64_t n, float* dst);
void Add(const float* a, const float* b, float* out, int64_t n);    // out = a + b
void SiluMul(const float* a, const float* b, float* out, int64_t n);  // out = silu(a) * b
void Silu(const float* x, float* out, int64_t n);                   // out = x * sigmoid(x)
void Sigmoid(const float* x, float* out, int64_t n);                // out = 1 / (1 + exp(-x))
void Softplus(const float* x, float* out, int64_t n);               // out = log(1 + exp(x))
void Softmax(float* x, int64_t n);                                  // in place, max-subtracted
// x *= rsqrt(sum(x^2) + eps), per row of n (the GDN q/k normalisation).
void L2Normalize(float* x, int64_t rows, int64_t n, float eps);

}  // namespace lineage::kernels
