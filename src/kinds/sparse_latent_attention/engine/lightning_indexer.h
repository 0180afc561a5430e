// The lightning indexer of sparse latent attention (spec latent-attention
// §1.2, §1.3, §1.6): on a full layer, for every new row t of the batch,
//   iq_h = rope(indexer.q_b qr)_h                  qr: the normed q latent
//   k    = rope(LayerNorm(indexer.k xn))           cached per token and layer
//   w    = indexer.proj xn / sqrt(D Hi)
//   I(t, s) = sum_h w_h max(0, iq_h . k_s)         for every cached key s <= t
//   Sel(t) = the min(K, t + 1) keys of highest I   (K = indexer_top_k)
// Queries and keys are turned by the orthonormal Hadamard matrix of size D
// before the key is stored when D is a power of two, as llama.cpp does: the
// scores are unchanged up to rounding and a bf16 page rounds the same values.
//
// A shared layer (GLM-5.2) runs none of this and attends over the selection
// the last full layer below it left in the workspace, for the same rows.
//
// Scores are computed a page of keys at a time by kernels::Gemm (the page's
// keys as the weight, every (row, head) query as a token), a block of rows at
// a time so the score rows stay small; top-k is a selection per row, its keys
// then sorted by position (gathers read pages in order).
#pragma once

#include <cstdint>

#include "kinds/sparse_latent_attention/engine/key_selection.h"
#include "engine/layers.h"

namespace lineage::engine {


// Runs the indexer of full layer `w` (its keys go to index layer
// `index_layer` of each segment's pages, rows already reserved) for every
// row of the batch: qr [R, q_lora] the normed q latent, xn [R, H] the layer
// input, rope [R, dr] each row's cos | sin table (rope.h). Writes `sel`.
void SelectKeys(const model::IndexerWeights& w, int64_t index_layer, const StepContext& ctx, const float* xn,
                const float* qr, const float* rope, KeySelection* sel);

// x[0, n) <- H_n x with H_n the orthonormal Sylvester-Hadamard matrix
// (entries +-1/sqrt(n)); n a power of two.
void HadamardInPlace(float* x, int64_t n);

}  // namespace lineage::engine
