// Kimi Linear (spec §7): pre-norm layers whose mixer is KDA (3 of 4 layers)
// or latent attention (MLA), each followed by a dense SwiGLU FFN (the
// leading layers) or the DeepSeek-V3 MoE. Norms are plain RMSNorm weights.
#include "engine/forward.h"
#include "engine/forward_common.h"

namespace lineage::engine {

void ForwardKimi(const model::Model& m, const StepContext& ctx, float* logits) {
  EmbedTokens(m.weights, ctx, ctx.ws.x.data());
  int64_t kda_index = 0, mla_index = 0;
  for (int64_t l = 0; l < m.config.num_layers; ++l) {
    const model::LayerWeights& layer = m.weights.layers[l];
    PreNormResidual(layer.input_norm, ctx, [&](const float* xn, float* out) {
      if (layer.kind == model::LayerKind::kLinearAttention) {
        KimiDeltaAttention(layer.kda, kda_index++, ctx, xn, out);
      } else {
        LatentAttention(layer.mla, mla_index++, ctx, xn, out);
      }
    });
    PreNormResidual(layer.post_norm, ctx, [&](const float* xn, float* out) {
      if (m.config.moe_layer(l)) {
        MoeFeedForward(layer.moe, ctx, xn, out);
      } else {
        FeedForward(layer, ctx, xn, out);
      }
    });
  }
  if (logits != nullptr) LastRowLogits(m.weights, ctx, ctx.ws.x.data(), logits);
}

}  // namespace lineage::engine
