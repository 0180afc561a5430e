// Latent attention in a step (layer_table.h): its forward is mla_layer.cpp
// with the paths of latent_paths.h.
#include "engine/layer_table.h"
#include "engine/layers.h"
#include "kinds/latent_attention/engine/latent_step.h"

namespace lineage::kinds::latent_attention {
namespace {

using namespace engine;

void Run(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  LatentAttention(w.mla, at.kv, at.index, false, ctx, xn, out);
}

}  // namespace

std::vector<const TensorView*> LatentMatrices(const model::LayerWeights& w) {
  const model::MlaWeights& a = w.mla;
  std::vector<const TensorView*> out = {&a.q_proj, &a.q_a, &a.q_b, &a.kv_a, &a.out_gate, &a.o_proj};
  for (const TensorView& t : a.k_b_t) out.push_back(&t);
  for (const TensorView& t : a.v_b) out.push_back(&t);
  return out;
}

std::vector<std::pair<std::string, const std::vector<float>*>> LatentVectors(const model::LayerWeights& w) {
  return {{"kv_a_norm", &w.mla.kv_a_norm}, {"q_a_norm", &w.mla.q_a_norm}};
}

extern const MixerStep kEngineStep{Run, LatentMatrices, LatentVectors};

}  // namespace lineage::kinds::latent_attention
