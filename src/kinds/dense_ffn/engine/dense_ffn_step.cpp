// The dense feed-forward in a step (layer_table.h): gate and up in one
// pass over the rows, the gated activation, down.
#include "engine/layer_table.h"
#include "core/kernels.h"
#include "engine/layers.h"
#include "engine/multi_gemm.h"

namespace lineage::kinds::dense_ffn {
namespace {

using namespace engine;

void FeedForward(const model::LayerWeights& w, const StepContext& ctx, const float* xn, float* out) {
  const int64_t R = ctx.batch.num_rows, H = ctx.config.hidden, I = ctx.config.intermediate;
  float* gate = ctx.ws.wide0.data();  // [R, I]
  float* up = ctx.ws.wide1.data();    // [R, I]
  MultiGemm({{&w.gate_proj, gate, I}, {&w.up_proj, up, I}}, xn, H, R, ctx.pool);
  GatedActivation(ctx.config, gate, up, R * I);
  kernels::Gemm(w.down_proj, gate, I, out, H, R, ctx.pool);
}

}  // namespace

extern const FfnStep kEngineStep{FeedForward};

}  // namespace lineage::kinds::dense_ffn
