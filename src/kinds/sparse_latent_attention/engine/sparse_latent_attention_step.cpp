// Sparse latent attention in a step (layer_table.h): latent attention's
// forward over the keys its lightning indexer (lightning_indexer.h) selects.
#include "engine/layer_table.h"
#include "engine/layers.h"
#include "kinds/latent_attention/engine/latent_step.h"

namespace lineage::kinds::sparse_latent_attention {
namespace {

using namespace engine;

void Run(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn, float* out) {
  LatentAttention(w.mla, at.kv, at.index, true, ctx, xn, out);
}
// Latent attention's, and the indexer's on a full layer (absent on a shared one).
std::vector<const TensorView*> Matrices(const model::LayerWeights& w) {
  std::vector<const TensorView*> out = latent_attention::LatentMatrices(w);
  const model::IndexerWeights& x = w.mla.indexer;
  for (const TensorView* t : {&x.q_b, &x.k, &x.weights_proj}) out.push_back(t);
  return out;
}
std::vector<std::pair<std::string, const std::vector<float>*>> Vectors(const model::LayerWeights& w) {
  auto out = latent_attention::LatentVectors(w);
  out.push_back({"index_k_norm", &w.mla.indexer.k_norm});
  out.push_back({"index_k_norm_bias", &w.mla.indexer.k_norm_bias});
  return out;
}

}  // namespace

extern const MixerStep kEngineStep{Run, Matrices, Vectors};

}  // namespace lineage::kinds::sparse_latent_attention
