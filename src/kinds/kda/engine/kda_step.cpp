// Kimi Delta Attention in a step (layer_table.h): its forward is kda_layer.cpp.
#include "engine/layer_table.h"
#include "engine/layers.h"

namespace lineage::kinds::kda {
namespace {

using namespace engine;

void Run(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  KimiDeltaAttention(w.kda, at.state, ctx, xn, out);
}
std::vector<const TensorView*> Matrices(const model::LayerWeights& w) {
  const model::KdaWeights& k = w.kda;
  return {&k.q_proj, &k.k_proj, &k.v_proj, &k.f_a, &k.f_b, &k.b_proj, &k.g_a, &k.g_b, &k.g_full, &k.o_proj};
}
std::vector<std::pair<std::string, const std::vector<float>*>> Vectors(const model::LayerWeights& w) {
  return {{"conv", &w.kda.conv}, {"dt_bias", &w.kda.dt_bias}, {"ssm_a", &w.kda.ssm_a}, {"norm", &w.kda.norm}};
}

}  // namespace

extern const MixerStep kEngineStep{Run, Matrices, Vectors};

}  // namespace lineage::kinds::kda
