// The Qwen3.5 hybrid stack (spec §0, §4.4), dense and MoE (qwen3_5_moe,
// qwen3_next): pre-norm layers whose mixer is a Gated DeltaNet (3 of 4
// layers) or gated softmax attention, each followed by a SwiGLU FFN or the
// sparse MoE FFN. Zero-centred norm weights arrive already folded to (1 + w).
#include "engine/forward.h"
#include "engine/forward_common.h"

namespace lineage::engine {

void ForwardQwen35(const model::Model& m, const StepContext& ctx, float* logits) {
  EmbedTokens(m.weights, ctx, ctx.ws.x.data());  // h0 = embed[token]
  int64_t gdn_index = 0, attn_index = 0;
  for (const model::LayerWeights& layer : m.weights.layers) {
    PreNormResidual(layer.input_norm, ctx, [&](const float* xn, float* out) {  // h += Mixer(N1(h))
      if (layer.kind == model::LayerKind::kLinearAttention) {
        GatedDeltaNet(layer.linear, gdn_index++, ctx, xn, out);
      } else {
        SelfAttention(layer.full, attn_index++, ctx, xn, out);
      }
    });
    PreNormResidual(layer.post_norm, ctx, [&](const float* xn, float* out) {  // h += FFN(N2(h))
      if (m.config.moe()) {
        MoeFeedForward(layer.moe, ctx, xn, out);
      } else {
        FeedForward(layer, ctx, xn, out);
      }
    });
  }
  if (logits != nullptr) LastRowLogits(m.weights, ctx, ctx.ws.x.data(), logits);
}

}  // namespace lineage::engine
