// Token embedding, the gated activation and the output head: the parts of
// a step outside the layer kinds, one Gemm over all rows of the batch each.
#include <cmath>
#include <cstring>

#include "core/kernels.h"
#include "engine/layers.h"
#include "engine/multi_gemm.h"

namespace lineage::engine {

void EmbedTokens(const model::Weights& w, const StepContext& ctx, float* x) {
  const int64_t H = ctx.config.hidden;
  for (const Segment& s : ctx.batch.segments) {
    for (int64_t t = 0; t < s.num_tokens; ++t) kernels::EmbeddingRow(w.embed, s.tokens[t], x + (s.row_begin + t) * H);
  }
}

void GatedActivation(const model::ModelConfig& c, float* gate, const float* up, int64_t n) {
  if (c.situ.beta <= 0) return kernels::SiluMul(gate, up, gate, n);
  const float b = static_cast<float>(c.situ.beta), lam = static_cast<float>(c.situ.linear_beta);
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i], u = up[i];
    gate[i] = b * std::tanh(g / b) / (1.0f + std::exp(-g)) * (lam > 0 ? lam * std::tanh(u / lam) : u);
  }
}

void HeadLogits(const model::Weights& w, const StepContext& ctx, const float* x, float* logits) {
  const int64_t H = ctx.config.hidden, V = ctx.config.vocab;
  float* rows = ctx.ws.xn.data();  // [rows emitted, H] <= [R, H]
  int64_t n = 0;
  for (const Segment& seg : ctx.batch.segments) {
    const int64_t k = seg.logits_rows();
    std::memcpy(rows + n * H, x + (seg.row_begin + seg.num_tokens - k) * H, static_cast<size_t>(k * H) * 4);
    n += k;
  }
  kernels::RmsNorm(rows, w.final_norm.data(), static_cast<float>(ctx.config.rms_eps), n, H, rows);
  kernels::Gemm(w.lm_head, rows, H, logits, V, n, ctx.pool);
}

}  // namespace lineage::engine
