// Qwen3.5 dense hybrid (spec §0, §4.4): pre-norm layers whose mixer is a
// Gated DeltaNet (3 of 4 layers) or gated softmax attention, each followed by
// a SwiGLU FFN. Zero-centred norm weights arrive already folded to (1 + w).
#include "core/kernels.h"
#include "engine/forward.h"

namespace lineage::engine {

void ForwardQwen35(const model::Model& m, const StepContext& ctx, float* logits) {
  const model::ModelConfig& c = m.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden;
  const float eps = static_cast<float>(c.rms_eps);
  float* x = ctx.ws.x.data();
  float* xn = ctx.ws.xn.data();
  float* out = ctx.ws.out.data();

  EmbedTokens(m.weights, ctx, x);  // h0 = embed[token]
  int64_t gdn_index = 0, attn_index = 0;
  for (const model::LayerWeights& layer : m.weights.layers) {
    kernels::RmsNorm(x, layer.input_norm.data(), eps, R, H, xn);
    if (layer.kind == model::LayerKind::kLinearAttention) {
      GatedDeltaNet(layer.linear, gdn_index++, ctx, xn, out);
    } else {
      SelfAttention(layer.full, attn_index++, ctx, xn, out);
    }
    kernels::Add(x, out, x, R * H);  // h += Mixer(N1(h))
    kernels::RmsNorm(x, layer.post_norm.data(), eps, R, H, xn);
    FeedForward(layer, ctx, xn, out);
    kernels::Add(x, out, x, R * H);  // h += FFN(N2(h))
  }
  if (logits != nullptr) LastRowLogits(m.weights, ctx, x, logits);
}

}  // namespace lineage::engine
