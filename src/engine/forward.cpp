// The forward pass of every architecture: pre-norm layers, each a mixer
// (Gated DeltaNet, KDA, softmax attention, latent attention dense or sparse)
// and a feed-forward (dense, MoE), as its kinds say (layer_table.h):
//   h = embed[token]
//   h += Mixer(norm(h));  h += FFN(norm(h))       for every layer
//   logits = head(norm(h))                         of each segment's last row (or every row)
// Norm weights arrive with every file convention applied (weights.h). Kimi
// K3 replaces the residual stream by Block AttnRes (ForwardAttnRes).
#include "engine/forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels.h"
#include "engine/layer_table.h"

namespace lineage::engine {
namespace {

// x += block(rmsnorm(x) * norm) over all rows of the batch (x = ws.x, the
// normed rows go to ws.xn, the block writes ws.out).
template <typename Block>
void PreNormResidual(const std::vector<float>& norm, const StepContext& ctx, Block&& block) {
  const int64_t R = ctx.batch.num_rows, H = ctx.config.hidden;
  float* x = ctx.ws.x.data();
  kernels::RmsNorm(x, norm.data(), static_cast<float>(ctx.config.rms_eps), R, H, ctx.ws.xn.data());
  block(ctx.ws.xn.data(), ctx.ws.out.data());
  kernels::Add(x, ctx.ws.out.data(), x, R * H);
}

// Block AttnRes' mix (spec latent-attention §2.5) of every row: over the n
// banked vectors and `cur`, softmax of each one's weightless RMSNorm dotted
// with w, applied to the raw vectors; into out. bank holds [n][R][H].
void AttnResMix(const float* bank, int64_t n, const float* cur, const std::vector<float>& w, int64_t R, int64_t H,
                float eps, float* out) {
  std::vector<float> score(static_cast<size_t>(n + 1));
  auto norm_dot = [&](const float* v) {
    const float rms = std::sqrt(kernels::Dot(v, v, H) / static_cast<float>(H) + eps);
    return kernels::Dot(v, w.data(), H) / rms;
  };
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t j = 0; j < n; ++j) score[j] = norm_dot(bank + (j * R + r) * H);
    score[n] = norm_dot(cur + r * H);
    kernels::Softmax(score.data(), n + 1);
    float* o = out + r * H;
    for (int64_t i = 0; i < H; ++i) o[i] = score[n] * cur[r * H + i];
    for (int64_t j = 0; j < n; ++j) kernels::Axpy(score[j], bank + (j * R + r) * H, o, H);
  }
}

// Kimi K3's layers over Block AttnRes: h is banked (raw) at the first layer
// of every block, where the running sum restarts at the mixer's output;
// the mixer and the FFN read mixes of the bank and the running sum.
void ForwardAttnRes(const model::Model& m, const StepContext& ctx, float* logits) {
  const model::ModelConfig& c = m.config;
  const int64_t R = ctx.batch.num_rows, H = c.hidden, B = c.attn_res_block;
  const float eps = static_cast<float>(c.rms_eps);
  Workspace& ws = ctx.ws;
  float* h = ws.x.data();
  float* mix = ws.res_mix.data();  // [R, H]
  std::vector<float>& bank = ws.res_bank;
  bank.resize(static_cast<size_t>(((c.num_layers + B - 1) / B) * R * H));
  int64_t banked = 0;
  EmbedTokens(m.weights, ctx, h);
  LayerSlots slots;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const model::LayerWeights& layer = m.weights.layers[l];
    const float* a = h;
    if (banked > 0) {
      AttnResMix(bank.data(), banked, h, layer.attn_res_score, R, H, eps, mix);
      a = mix;
    }
    const bool bank_here = l % B == 0;
    if (bank_here) std::memcpy(bank.data() + banked++ * R * H, h, static_cast<size_t>(R * H) * 4);
    kernels::RmsNorm(a, layer.input_norm.data(), eps, R, H, ws.xn.data());
    RunMixer(c, layer, l, slots, ctx, ws.xn.data(), ws.out.data());
    if (bank_here) {
      std::memcpy(h, ws.out.data(), static_cast<size_t>(R * H) * 4);
    } else {
      kernels::Add(h, ws.out.data(), h, R * H);
    }
    AttnResMix(bank.data(), banked, h, layer.ffn_res_score, R, H, eps, mix);
    kernels::RmsNorm(mix, layer.post_norm.data(), eps, R, H, ws.xn.data());
    RunFfn(c, layer, l, ctx, ws.xn.data(), ws.out.data());
    kernels::Add(h, ws.out.data(), h, R * H);
  }
  AttnResMix(bank.data(), banked, h, m.weights.output_res_score, R, H, eps, mix);
  std::memcpy(h, mix, static_cast<size_t>(R * H) * 4);
  if (logits != nullptr) HeadLogits(m.weights, ctx, h, logits);
}

}  // namespace

void Forward(const model::Model& m, const StepContext& ctx, float* logits) {
  const model::ModelConfig& c = m.config;
  if (c.attn_res_block > 0) return ForwardAttnRes(m, ctx, logits);
  EmbedTokens(m.weights, ctx, ctx.ws.x.data());  // h0 = embed[token]
  LayerSlots slots;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const model::LayerWeights& layer = m.weights.layers[l];
    PreNormResidual(layer.input_norm, ctx, [&](const float* xn, float* out) {  // h += Mixer(N1(h))
      RunMixer(c, layer, l, slots, ctx, xn, out);
    });
    PreNormResidual(layer.post_norm, ctx, [&](const float* xn, float* out) {  // h += FFN(N2(h))
      RunFfn(c, layer, l, ctx, xn, out);
    });
  }
  if (ctx.mtp) FillMtp(m, ctx);
  if (logits != nullptr) HeadLogits(m.weights, ctx, ctx.ws.x.data(), logits);
}

}  // namespace lineage::engine
