// Softmax attention in a step (layer_table.h): its forward is attention_layer.cpp.
#include "engine/layer_table.h"
#include "engine/layers.h"

namespace lineage::kinds::attention {
namespace {

using namespace engine;

void Run(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  SelfAttention(w.full, at.kv, ctx, xn, out);
}
std::vector<const TensorView*> Matrices(const model::LayerWeights& w) {
  const model::FullAttentionWeights& a = w.full;
  return {&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj};
}
std::vector<std::pair<std::string, const std::vector<float>*>> Vectors(const model::LayerWeights& w) {
  return {{"q_norm", &w.full.q_norm}, {"k_norm", &w.full.k_norm}};
}

}  // namespace

extern const MixerStep kEngineStep{Run, Matrices, Vectors};

}  // namespace lineage::kinds::attention
