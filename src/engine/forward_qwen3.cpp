// Qwen3 dense (spec §11): pre-norm layers of softmax attention (q/k norms,
// full NeoX RoPE, no output gate) and a SwiGLU FFN. Every layer holds KV, so
// any prefix of the cache is a valid state.
#include "engine/forward.h"
#include "engine/forward_common.h"

namespace lineage::engine {

void ForwardQwen3(const model::Model& m, const StepContext& ctx, float* logits) {
  EmbedTokens(m.weights, ctx, ctx.ws.x.data());  // h0 = embed[token]
  int64_t attn_index = 0;
  for (const model::LayerWeights& layer : m.weights.layers) {
    PreNormResidual(layer.input_norm, ctx, [&](const float* xn, float* out) {  // h += Attn(N1(h))
      SelfAttention(layer.full, attn_index++, ctx, xn, out);
    });
    PreNormResidual(layer.post_norm, ctx, [&](const float* xn, float* out) {  // h += FFN(N2(h))
      FeedForward(layer, ctx, xn, out);
    });
  }
  if (logits != nullptr) LastRowLogits(m.weights, ctx, ctx.ws.x.data(), logits);
}

}  // namespace lineage::engine
