// Qwen3 dense (spec §11): pre-norm layers of softmax attention (q/k norms,
// full NeoX RoPE, no output gate) and a SwiGLU FFN. Every layer holds KV, so
// any prefix of the cache is a valid state.
#include "core/kernels.h"
#include "engine/forward.h"

namespace lineage::engine {

void ForwardQwen3(const model::Model& m, const StepContext& ctx, float* logits) {
  const model::ModelConfig& c = m.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden;
  const float eps = static_cast<float>(c.rms_eps);
  float* x = ctx.ws.x.data();
  float* xn = ctx.ws.xn.data();
  float* out = ctx.ws.out.data();

  EmbedTokens(m.weights, ctx, x);  // h0 = embed[token]
  int64_t attn_index = 0;
  for (const model::LayerWeights& layer : m.weights.layers) {
    kernels::RmsNorm(x, layer.input_norm.data(), eps, R, H, xn);
    SelfAttention(layer.full, attn_index++, ctx, xn, out);
    kernels::Add(x, out, x, R * H);  // h += Attn(N1(h))
    kernels::RmsNorm(x, layer.post_norm.data(), eps, R, H, xn);
    FeedForward(layer, ctx, xn, out);
    kernels::Add(x, out, x, R * H);  // h += FFN(N2(h))
  }
  if (logits != nullptr) LastRowLogits(m.weights, ctx, x, logits);
}

}  // namespace lineage::engine
