// The latent-attention archs (spec §7; latent-attention §1): pre-norm layers
// whose mixer is KDA or latent attention (MLA: dense in Kimi Linear, sparse
// with the lightning indexer in glm-dsa, deepseek32 and kda-dsa), each
// followed by a dense SwiGLU FFN (the leading layers) or the DeepSeek-V3
// MoE. Norms are plain RMSNorm weights.
#include "engine/forward.h"
#include "engine/forward_common.h"

namespace lineage::engine {

void ForwardLatent(const model::Model& m, const StepContext& ctx, float* logits) {
  const model::ModelConfig& c = m.config;
  EmbedTokens(m.weights, ctx, ctx.ws.x.data());
  int64_t kda_index = 0, mla_index = 0, index_layer = 0;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const model::LayerWeights& layer = m.weights.layers[l];
    PreNormResidual(layer.input_norm, ctx, [&](const float* xn, float* out) {
      if (layer.kind == model::LayerKind::kLinearAttention) {
        KimiDeltaAttention(layer.kda, kda_index++, ctx, xn, out);
      } else {
        LatentAttention(layer.mla, mla_index++, c.indexer_layer(l) ? index_layer++ : -1, ctx, xn, out);
      }
    });
    PreNormResidual(layer.post_norm, ctx, [&](const float* xn, float* out) {
      if (c.moe_layer(l)) {
        MoeFeedForward(layer.moe, ctx, xn, out);
      } else {
        FeedForward(layer, ctx, xn, out);
      }
    });
  }
  if (logits != nullptr) LastRowLogits(m.weights, ctx, ctx.ws.x.data(), logits);
}

}  // namespace lineage::engine
