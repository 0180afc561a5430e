// The building blocks of a forward step, shared by the per-architecture
// forward passes (forward_qwen35.cpp, forward_qwen3.cpp). Each block reads
// normalised rows `xn` [R, H] of every segment of the batch and writes its
// output rows `out` [R, H]; the caller adds the residual. Blocks that keep
// state (attention: KV pages; GDN: conv window and delta state) update the
// segment's sequence as they go; the caller reserved the KV rows beforehand.
#pragma once

#include <cstdint>
#include <span>

#include "core/thread_pool.h"
#include "engine/batch.h"
#include "engine/workspace.h"
#include "model/weights.h"

namespace lineage::engine {

struct StepContext {
  const model::ModelConfig& config;
  const Batch& batch;
  Workspace& ws;
  ThreadPool* pool;
  // GDN runs of at least this many tokens use the chunked delta rule, shorter
  // ones the recurrence (EngineOptions::delta_chunked_min_tokens).
  int64_t delta_chunked_min_tokens;
  // Latent attention's path for runs of several rows (latent_paths.h):
  // kAuto lets the cost model pick (EngineOptions::latent_path).
  LatentPath latent_path = LatentPath::kAuto;
  // The MTP block's KV layer is in the pages: every step also writes it
  // (FillMtp) and keeps the sequences' last hidden rows.
  bool mtp = false;
};

// x[r] = embed[token of row r].
void EmbedTokens(const model::Weights& w, const StepContext& ctx, float* x);

// gate[i] = act(gate[i], up[i]) for i < n: silu(g) u, or Kimi K3's SiTU
// (spec latent-attention §2.4) when c.situ.beta > 0.
void GatedActivation(const model::ModelConfig& c, float* gate, const float* up, int64_t n);


// Sparse MoE FFN (spec §4.3): router softmax, top-k renormalised, the
// sigmoid-scaled shared expert; rows grouped by expert (moe_layer.cpp).
// With w.score_bias (Kimi, spec §7.4): sigmoid router, top-k on score +
// bias, weights renormalised x experts.routed_scaling, the shared expert ungated.
void MoeFeedForward(const model::MoeWeights& w, const StepContext& ctx, const float* xn, float* out);

// Gated DeltaNet mixer (spec §2); `gdn_index` counts GDN layers only.
void GatedDeltaNet(const model::LinearAttentionWeights& w, int64_t gdn_index, const StepContext& ctx,
                   const float* xn, float* out);

// Softmax attention mixer over the paged KV (spec §3 with the output gate
// when config.attn_output_gate, §11 without); `attn_index` counts attention
// layers only.
void SelfAttention(const model::FullAttentionWeights& w, int64_t attn_index, const StepContext& ctx,
                   const float* xn, float* out);

// Only the KV rows the attention mixer would write (k, v projected, k normed
// and rotated): the MTP block's rows in a trunk step, which nothing attends
// from.
void WriteAttentionKv(const model::FullAttentionWeights& w, int64_t attn_index, const StepContext& ctx,
                      const float* xn);

// Kimi Delta Attention mixer (spec §7.2, kda_layer.cpp); `kda_index` counts
// KDA layers only (their state sits where GDN state would).
void KimiDeltaAttention(const model::KdaWeights& w, int64_t kda_index, const StepContext& ctx, const float* xn,
                        float* out);

// Latent attention mixer (spec §7.3, latent-attention §1; absorbed;
// mla_layer.cpp) over the sequence's latent pages; `mla_index` counts MLA
// layers only. On a full sparse layer `index_layer` counts the layers that
// run the lightning indexer (its keys' place in the pages); elsewhere -1.
// A sparse layer attends to the latest selection (its own or the full layer's
// below it), a dense one (kLatent: dense models, the MTP block) to every key.
void LatentAttention(const model::MlaWeights& w, int64_t mla_index, int64_t index_layer, bool sparse,
                     const StepContext& ctx, const float* xn, float* out);

// The MTP block (mtp_layer.cpp; spec hybrid-qwen §5.2). Its row at position
// p joins the token at p and the trunk's final-normed state at p - 1:
//   x = eh_proj [enorm(embed[token]) | hnorm(h_{p-1})]
//   x += Mixer(N1(x));  x += FFN(N2(x));  logits = head(head_norm(x))
// and drafts the token at p + 1. (llama.cpp places that row at p - 1: a
// shift of every position by one, which rotary attention does not see.)
//
// FillMtp, at the end of a trunk step: the block's KV rows for every row of
// the batch (no attention: nothing reads its output), with h from the trunk's rows (the first
// row's from its sequence's Hidden); then each sequence keeps its rows'
// states (Sequence::KeepHidden). Needs ctx.ws.x as the trunk left it.
void FillMtp(const model::Model& m, const StepContext& ctx);
// One draft row per segment (one token each): the whole block from h[s]
// (null: zeros); writes the KV rows, the head-normed states into
// ctx.ws.mtp_h [S, H] (the next draft's h) and the logits [S, V].
void DraftMtpRows(const model::Model& m, const StepContext& ctx, std::span<const float* const> h, float* logits);

// Only the latent rows latent attention would write (as WriteAttentionKv).
void WriteLatentKv(const model::MlaWeights& w, int64_t mla_index, const StepContext& ctx, const float* xn);

// lm_head(final_norm(x)) of the last row of each segment, or of every row
// of a segment with logits_every_row, in batch order: [sum logits_rows(), V].
void HeadLogits(const model::Weights& w, const StepContext& ctx, const float* x, float* logits);

}  // namespace lineage::engine
