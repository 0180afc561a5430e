// The KDA delta rule (Kimi Delta Attention, spec §7.2) for one head: the
// gated delta rule of kernels::DeltaRule* with a decay per key channel
// instead of one per head:
//   S <- diag(exp(g_t)) S;  S <- S + k_t (beta_t (v_t - S^T k_t))^T;  o_t = S^T q_t
// S is [dk, dv] (row i = key channel i), fp32, read and written in place.
// q, k: [T, dk] at row stride ldqk (q already L2-normalised and scaled),
// v: [T, dv] at ldv, g: [T, dk] log-decays (<= 0) at ldg, beta: T values at
// stride ldb, o: [T, dv] at ldo. S and o must not overlap the inputs.
// Thread-safe for distinct S and o.
#pragma once

#include <cstdint>

#include "core/kernels.h"

namespace lineage::kernels {

// Token by token: decode and short runs; `out` as for DeltaRuleRecurrent
// (kernels.h; its log replays with DeltaRuleReplay).
void KdaRecurrent(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, const float* g,
                  int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, int64_t dv, float* S, float* o,
                  int64_t ldo, const RecurrentOutputs& out = {});

// The same result in chunks of `chunk` tokens, for prefill; any T and any
// initial S. Inside a chunk the pairwise decays exp(G_t - G_s) (G the
// cumulative log-decay, t >= s) are built as running products of the
// per-token decays exp(g), each <= 1: never as exp(G_t) * exp(-G_s), whose
// second factor overflows once a channel has decayed by more than e^88.
void KdaChunked(const float* q, const float* k, int64_t ldqk, const float* v, int64_t ldv, const float* g,
                int64_t ldg, const float* beta, int64_t ldb, int64_t T, int64_t dk, int64_t dv, float* S, float* o,
                int64_t ldo, int64_t chunk = 16);

}  // namespace lineage::kernels
