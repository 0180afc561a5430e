// Gated DeltaNet in a step (layer_table.h): its forward is gdn_layer.cpp.
#include "engine/layer_table.h"
#include "engine/layers.h"

namespace lineage::kinds::gated_deltanet {
namespace {

using namespace engine;

void Run(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  GatedDeltaNet(w.linear, at.state, ctx, xn, out);
}
std::vector<const TensorView*> Matrices(const model::LayerWeights& w) {
  const model::LinearAttentionWeights& g = w.linear;
  return {&g.in_proj_qkv, &g.in_proj_z, &g.in_proj_b, &g.in_proj_a, &g.in_proj_qkvz, &g.in_proj_ba, &g.out_proj};
}
std::vector<std::pair<std::string, const std::vector<float>*>> Vectors(const model::LayerWeights& w) {
  return {{"conv", &w.linear.conv}, {"dt_bias", &w.linear.dt_bias}, {"ssm_a", &w.linear.ssm_a}, {"norm", &w.linear.norm}};
}

}  // namespace

extern const MixerStep kEngineStep{Run, Matrices, Vectors};

}  // namespace lineage::kinds::gated_deltanet
