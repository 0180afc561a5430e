// Sparse latent attention's tensors and sizes (layer_kinds.h): latent
// attention's, and the lightning indexer's on a full layer.
#include "kinds/latent_attention/latent_tensors.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::sparse_latent_attention {
namespace {

using namespace model;

// The lightning indexer of a full layer (spec latent-attention §3.2), after
// the latent attention's own tensors; HF names as GLM-5's and DeepSeek-V3.2's
// checkpoints.
void Plan(TensorPlanner& p, int64_t l) {
  latent_attention::PlanLatentTensors(p, l);
  const ModelConfig& c = p.c;
  if (!c.indexer_layer(l)) return;  // a layer sharing another's selection
  const int64_t H = c.hidden, Hi = c.indexer_heads, D = c.indexer_dim;
  p.Add(Role::kIdxQB, l, "self_attn.indexer.wq_b.weight", "indexer.attn_q_b.weight", {Hi * D, c.q_lora_rank});
  p.Add(Role::kIdxK, l, "self_attn.indexer.wk.weight", "indexer.attn_k.weight", {D, H});
  p.Add(Role::kIdxKNorm, l, "self_attn.indexer.k_norm.weight", "indexer.k_norm.weight", {D});
  p.Add(Role::kIdxKNormBias, l, "self_attn.indexer.k_norm.bias", "indexer.k_norm.bias", {D});
  p.Add(Role::kIdxProj, l, "self_attn.indexer.weights_proj.weight", "indexer.proj.weight", {Hi, H});
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  IndexerWeights& x = w.mla.indexer;
  switch (t.plan.role) {
    case Role::kIdxQB: x.q_b = t.view; return true;
    case Role::kIdxK: x.k = t.view; return true;
    case Role::kIdxKNorm: x.k_norm = std::move(t.small); return true;
    case Role::kIdxKNormBias: x.k_norm_bias = std::move(t.small); return true;
    case Role::kIdxProj: x.weights_proj = t.view; return true;
    default: return latent_attention::BindLatentTensor(t, w);
  }
}

// The latent row, and the indexer's key on a full layer.
int64_t KvFloats(const ModelConfig& c, int64_t l) { return c.latent_dim() + (c.indexer_layer(l) ? c.indexer_dim : 0); }

}  // namespace

extern const model::MixerKindInfo kModelSpec{"sparse-latent-attention", false, KvFloats, model::NoState, {Plan, Bind, nullptr}};

}  // namespace lineage::kinds::sparse_latent_attention
