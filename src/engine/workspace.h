// Workspace: the activation buffers of one forward step, sized for the rows
// of the largest step seen and reused across steps so the hot path does not
// allocate. Owned by the Engine; one step at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kinds/latent_attention/engine/latent_paths.h"
#include "kinds/sparse_latent_attention/engine/indexer_scratch.h"
#include "model/config.h"

namespace lineage::engine {

// Scratch of the MoE FFN (moe_layer.cpp) for R rows routed to k experts each.
struct MoeScratch {
  std::vector<float> logits;           // [R, E] router logits, then probabilities
  std::vector<int32_t> route_expert;   // [R, k]
  std::vector<float> route_weight;     // [R, k], renormalised
  std::vector<int64_t> slot_of_route;  // [R, k]: the route's row in xs / ys
  std::vector<int64_t> count, offset, cursor;  // [E]: routes per expert, first slot
  std::vector<float> xs;               // [R k, H] inputs grouped by expert
  std::vector<float> gate, up;         // [R k, I_e] then [R, I_s] (shared expert)
  std::vector<float> ys;               // [R k, H] expert outputs, slot order
  std::vector<float> latent_in;        // [R, X]: a latent MoE's z, then its weighted sum
  std::vector<float> latent_out;       // [R, H]: latent_up of that sum
  // Since the engine began: MoE layer passes, and the distinct routed
  // experts they ran (what a step reads of the experts' weights).
  int64_t layer_passes = 0, experts_run = 0;
};

// Scratch of the latent archs' mixers (kda_layer.cpp, mla_layer.cpp, and
// the lightning indexer's); empty for other models.
struct LatentScratch {
  std::vector<float> low;    // [R, 2 d]: the low-rank decay and gate inputs
  std::vector<float> decay;  // [R, nh d] per-channel log-decays
  std::vector<float> gate;   // [R, nh d] output gate
  std::vector<float> lat;    // [R, W] latent rows
  std::vector<float> q_lat;  // [R, n_h W] absorbed queries
  std::vector<float> ctx;    // [R, n_h W] attended latent rows
  std::vector<float> qr;     // [R, q_lora] the normed q latent
  std::vector<float> rope;   // [R, dr] cos | sin of each row's position
  IndexerScratch indexer;      // a sparse model's lightning indexer (its kind sizes it)
  std::vector<ExpandedKeys> expanded;          // per segment of the expanded path
  std::vector<float> part_out, part_stats;     // sparse decode rows split by keys: parts' outputs, max | sum
  std::vector<std::vector<float>> expand_wk;   // per MLA layer, built at first use: W_k,h [nh, dn, L]
};

struct Workspace {
  // Row-major activations, [rows, width] each.
  std::vector<float> x;      // residual stream [R, H]
  std::vector<float> xn;     // normed input [R, H]
  std::vector<float> out;    // mixer / FFN output [R, H]
  std::vector<float> wide0;  // [R, max(conv_dim, 2 n_h hd, I)]
  std::vector<float> wide1;  // [R, max(conv_dim, n_h hd, I)]
  std::vector<float> mid0;   // [R, max(H_v d_v, n_h hd)]
  std::vector<float> mid1;   // [R, max(H_v d_v, n_h hd)]
  std::vector<float> kv0;    // [R, n_kv hd]
  std::vector<float> kv1;    // [R, n_kv hd]
  std::vector<float> heads0; // [R, H_v]
  std::vector<float> heads1; // [R, H_v]
  std::vector<float> rope;   // [R, rope_dims] cos | sin per row
  MoeScratch moe;            // sized only for MoE models
  LatentScratch latent;      // sized only for the latent archs
  std::vector<float> res_mix;   // [R, H] Block AttnRes' mix (K3)
  std::vector<float> res_bank;  // [blocks, R, H] its banked vectors, grown by the forward
  // The MTP block (mtp_layer.cpp): the trunk's final-normed rows (or the
  // block's head-normed output), its [embedding | state] input and residual.
  std::vector<float> mtp_h;     // [R, H]
  std::vector<float> mtp_in;    // [R, 2H]
  std::vector<float> mtp_x;     // [R, H]
  int64_t rows = 0;

  void Ensure(const model::ModelConfig& c, int64_t num_rows) {
    if (num_rows <= rows) return;
    rows = num_rows;
    const int64_t attn_q = c.num_heads * c.head_dim;
    const int64_t value_dim = c.delta.v_heads * c.delta.v_dim;
    const int64_t wide = std::max({c.delta.conv_dim(), 2 * attn_q, c.intermediate});
    const int64_t mid = std::max(value_dim, attn_q);
    auto grow = [&](std::vector<float>& v, int64_t width) { v.assign(static_cast<size_t>(rows * width), 0.0f); };
    grow(x, c.hidden);
    grow(xn, c.hidden);
    grow(out, c.hidden);
    grow(wide0, wide);
    grow(wide1, wide);
    grow(mid0, mid);
    grow(mid1, mid);
    grow(kv0, c.num_kv_heads * c.head_dim);
    grow(kv1, c.num_kv_heads * c.head_dim);
    grow(heads0, std::max<int64_t>(c.delta.v_heads, 1));
    grow(heads1, std::max<int64_t>(c.delta.v_heads, 1));
    grow(rope, std::max<int64_t>(c.rope_dims, 1));
    if (c.attn_res_block > 0) grow(res_mix, c.hidden);
    if (c.mtp()) {
      grow(mtp_h, c.hidden);
      grow(mtp_in, 2 * c.hidden);
      grow(mtp_x, c.hidden);
    }
    if (c.latent()) {
      const int64_t inner = c.delta.k_heads * c.delta.k_dim;
      grow(latent.low, 2 * c.delta.k_dim);
      grow(latent.decay, inner);
      grow(latent.gate, inner);
      grow(latent.lat, c.mla.latent_dim());
      grow(latent.q_lat, c.num_heads * c.mla.latent_dim());
      grow(latent.ctx, c.num_heads * c.mla.latent_dim());
      grow(latent.qr, c.mla.q_lora_rank);
      grow(latent.rope, std::max<int64_t>(c.mla.qk_rope_dim, 1));
      latent.indexer.Ensure(c, rows);
    }
    if (c.moe()) {
      const int64_t E = c.experts.count, k = c.experts.per_token;
      const int64_t routes = rows * k;
      grow(moe.logits, E);
      moe.route_expert.assign(static_cast<size_t>(routes), 0);
      moe.route_weight.assign(static_cast<size_t>(routes), 0.0f);
      moe.slot_of_route.assign(static_cast<size_t>(routes), 0);
      moe.count.assign(static_cast<size_t>(E), 0);
      moe.offset.assign(static_cast<size_t>(E), 0);
      moe.cursor.assign(static_cast<size_t>(E), 0);
      grow(moe.xs, k * c.hidden);
      grow(moe.gate, k * c.experts.width + c.experts.shared_width);
      grow(moe.up, k * c.experts.width + c.experts.shared_width);
      grow(moe.ys, k * c.hidden);
      grow(moe.latent_in, std::max<int64_t>(c.experts.latent, 1));
      grow(moe.latent_out, c.experts.latent > 0 ? c.hidden : 1);
    }
  }
};

}  // namespace lineage::engine
