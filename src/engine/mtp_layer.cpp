// The multi-token-prediction (NextN) block as a draft head (layers.h).
#include <cstring>
#include <vector>

#include "core/kernels.h"
#include "engine/layer_table.h"
#include "engine/layers.h"

namespace lineage::engine {
namespace {

// ctx.ws.mtp_x[r] = eh_proj [enorm(embed[token r]) | hnorm(h[r])], h[r] null: zeros.
void MtpInput(const model::Model& m, const StepContext& ctx, std::span<const float* const> h) {
  const model::MtpWeights& w = m.weights.mtp;
  const int64_t H = ctx.config.hidden, R = ctx.batch.num_rows;
  const float eps = static_cast<float>(ctx.config.rms_eps);
  float* in = ctx.ws.mtp_in.data();
  for (const Segment& s : ctx.batch.segments) {
    for (int64_t t = 0; t < s.num_tokens; ++t) {
      const int64_t r = s.row_begin + t;
      float* row = in + r * 2 * H;
      kernels::EmbeddingRow(m.weights.embed, s.tokens[t], row);
      kernels::RmsNorm(row, w.enorm.data(), eps, 1, H, row);
      if (h[static_cast<size_t>(r)] == nullptr) {
        std::memset(row + H, 0, static_cast<size_t>(H) * 4);
      } else {
        kernels::RmsNorm(h[static_cast<size_t>(r)], w.hnorm.data(), eps, 1, H, row + H);
      }
    }
  }
  kernels::Gemm(w.eh_proj, in, 2 * H, ctx.ws.mtp_x.data(), H, R, ctx.pool);
}

}  // namespace

void FillMtp(const model::Model& m, const StepContext& ctx) {
  const model::ModelConfig& c = m.config;
  const int64_t H = c.hidden, R = ctx.batch.num_rows;
  float* h = ctx.ws.mtp_h.data();
  kernels::RmsNorm(ctx.ws.x.data(), m.weights.final_norm.data(), static_cast<float>(c.rms_eps), R, H, h);
  std::vector<const float*> prev(static_cast<size_t>(R));
  for (const Segment& s : ctx.batch.segments) {
    prev[static_cast<size_t>(s.row_begin)] = s.seq->Hidden(s.start_pos() - 1);
    for (int64_t t = 1; t < s.num_tokens; ++t) prev[static_cast<size_t>(s.row_begin + t)] = h + (s.row_begin + t - 1) * H;
  }
  MtpInput(m, ctx, prev);
  const model::LayerWeights& layer = m.weights.mtp.layer;
  kernels::RmsNorm(ctx.ws.mtp_x.data(), layer.input_norm.data(), static_cast<float>(c.rms_eps), R, H, ctx.ws.xn.data());
  if (c.latent()) {
    WriteLatentKv(layer.mla, c.num_full_layers(), ctx, ctx.ws.xn.data());
  } else {
    WriteAttentionKv(layer.full, c.num_full_layers(), ctx, ctx.ws.xn.data());
  }
  for (const Segment& s : ctx.batch.segments) {
    const int64_t k = s.logits_rows();
    s.seq->KeepHidden(s.start_pos() + s.num_tokens - k, h + (s.row_begin + s.num_tokens - k) * H, k, H);
  }
}

void DraftMtpRows(const model::Model& m, const StepContext& ctx, std::span<const float* const> h, float* logits) {
  const model::ModelConfig& c = m.config;
  const model::LayerWeights& layer = m.weights.mtp.layer;
  const int64_t H = c.hidden, R = ctx.batch.num_rows;
  const float eps = static_cast<float>(c.rms_eps);
  MtpInput(m, ctx, h);
  float* x = ctx.ws.mtp_x.data();
  kernels::RmsNorm(x, layer.input_norm.data(), eps, R, H, ctx.ws.xn.data());
  LayerSlots slots;
  slots.kv = c.num_full_layers();
  RunMixer(c, layer, c.num_layers, slots, ctx, ctx.ws.xn.data(), ctx.ws.out.data());
  kernels::Add(x, ctx.ws.out.data(), x, R * H);
  kernels::RmsNorm(x, layer.post_norm.data(), eps, R, H, ctx.ws.xn.data());
  RunFfn(c, layer, c.num_layers, ctx, ctx.ws.xn.data(), ctx.ws.out.data());
  kernels::Add(x, ctx.ws.out.data(), x, R * H);
  kernels::RmsNorm(x, m.weights.mtp.head_norm.data(), eps, R, H, ctx.ws.mtp_h.data());
  kernels::Gemm(m.weights.lm_head, ctx.ws.mtp_h.data(), H, logits, c.vocab, R, ctx.pool);
}

}  // namespace lineage::engine
