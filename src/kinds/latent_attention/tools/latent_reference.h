// What the sparse kind's reference (src/kinds/sparse_latent_attention/)
// takes from latent attention's: the attention itself over given keys, and
// the interleaved RoPE both rotate with.
#pragma once

#include "tools/reference_math.h"

namespace lineage::kinds::latent_attention {

// Latent attention in the plain (unabsorbed) form (spec §7.3; latent-attention
// §1.1, §1.5): every head's keys [W_k,h c_kv | k_pe] and values W_v,h c_kv
// expanded for every position, softmax over (q_nope.k_nope + q_pe.k_pe) /
// sqrt(dn + dr) over the causal keys (those in `sel` when given). q comes
// from the query LoRA when the layer has one; q_pe and k_pe are rotated when
// mla.rope.
model::Mat LatentAttention(const model::ModelConfig& c, const model::MlaWeights& w, const model::Mat& x,
                           const model::Selection* sel);
// Interleaved ("NORM") RoPE on the pairs (2i, 2i + 1) of x[0, dims) at pos,
// under latent attention's YaRN when the model has one.
void RopeInterleaved(const model::ModelConfig& c, double* x, int64_t dims, int64_t pos);
// The angle of pair i of `dims` at `pos` and the factor on its cos and sin
// (YaRN as ggml's rope_yarn; spec latent-attention §1.5).
std::pair<double, double> PairAngle(const model::ModelConfig& c, int64_t i, int64_t dims, int64_t pos);

}  // namespace lineage::kinds::latent_attention
