// Sparse latent attention's tensors and sizes (layer_kinds.h): latent
// attention's, and the lightning indexer's on a full layer; and the
// indexer's hyperparameters (indexer_config.h), which the kind reads from
// both file forms, writes, checks and fingerprints itself.
#include <nlohmann/json.hpp>

#include "kinds/latent_attention/latent_tensors.h"
#include "kinds/sparse_latent_attention/indexer_config.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/layer_kinds.h"
#include "model/shapes.h"

namespace lineage::kinds::sparse_latent_attention {
namespace {

using namespace model;

// This kind's roles (layer_kinds.h).
constexpr Role kIdxQB = MixerRole(MixerKind::kSparseLatent, 0);
constexpr Role kIdxK = MixerRole(MixerKind::kSparseLatent, 1);
constexpr Role kIdxKNorm = MixerRole(MixerKind::kSparseLatent, 2);
constexpr Role kIdxKNormBias = MixerRole(MixerKind::kSparseLatent, 3);
constexpr Role kIdxProj = MixerRole(MixerKind::kSparseLatent, 4);

// The lightning indexer of a full layer (spec latent-attention §3.2), after
// the latent attention's own tensors; HF names as GLM-5's and DeepSeek-V3.2's
// checkpoints.
void Plan(TensorPlanner& p, int64_t l) {
  latent_attention::PlanLatentTensors(p, l);
  const ModelConfig& c = p.c;
  if (!IndexerLayer(c, l)) return;  // a layer sharing another's selection
  const int64_t H = c.hidden, Hi = c.indexer.heads, D = c.indexer.dim;
  p.Add(kIdxQB, l, "self_attn.indexer.wq_b.weight", "indexer.attn_q_b.weight", {Hi * D, c.mla.q_lora_rank});
  p.Add(kIdxK, l, "self_attn.indexer.wk.weight", "indexer.attn_k.weight", {D, H});
  p.Add(kIdxKNorm, l, "self_attn.indexer.k_norm.weight", "indexer.k_norm.weight", {D}, Values::kPlainNorm);
  p.Add(kIdxKNormBias, l, "self_attn.indexer.k_norm.bias", "indexer.k_norm.bias", {D}, Values::kBias);
  p.Add(kIdxProj, l, "self_attn.indexer.weights_proj.weight", "indexer.proj.weight", {Hi, H});
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  IndexerWeights& x = w.mla.indexer;
  switch (t.plan.role) {
    case kIdxQB: x.q_b = t.view; return true;
    case kIdxK: x.k = t.view; return true;
    case kIdxKNorm: x.k_norm = std::move(t.small); return true;
    case kIdxKNormBias: x.k_norm_bias = std::move(t.small); return true;
    case kIdxProj: x.weights_proj = t.view; return true;
    default: return latent_attention::BindLatentTensor(t, w);
  }
}

// The latent row, and beside it the indexer's key on a full layer.
int64_t IndexKeyFloats(const ModelConfig& c, int64_t l) { return IndexerLayer(c, l) ? c.indexer.dim : 0; }
int64_t KvFloats(const ModelConfig& c, int64_t l) { return c.mla.latent_dim() + IndexKeyFloats(c, l); }

using L = ConfigLimits;

// The indexer's GGUF keys (spec latent-attention §1.2, §1.6, §1.8): heads,
// key length and top k; glm-dsa's per-layer types (kda-dsa likewise).
// Absent on glm-dsa / kda-dsa: dense latent attention; deepseek32 must
// have them.
Status ReadGguf(const GgufFile& g, const std::string& a, ModelConfig* c) {
  if (!c->latent()) return Status::Ok();
  if (!g.Find(a + "attention.indexer.head_count")) {
    if (c->arch == Arch::kDeepseek32)
      return NotFound(g.path() + ": metadata key '" + a + "attention.indexer.head_count' is missing");
    return Status::Ok();
  }
  LINEAGE_ASSIGN_OR_RETURN(c->indexer.heads, ReadIntKey(g, a + "attention.indexer.head_count", 1, L::kMaxHeads));
  LINEAGE_ASSIGN_OR_RETURN(c->indexer.dim, ReadIntKey(g, a + "attention.indexer.key_length", 1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(c->indexer.top_k, ReadIntKey(g, a + "attention.indexer.top_k", 1, L::kMaxContext));
  SetIndexerConventions(c);
  if (c->arch == Arch::kDeepseek32) return Status::Ok();  // every trunk layer runs the indexer
  const std::string types_key = a + "attention.indexer.types";
  if (g.Find(types_key)) {
    LINEAGE_ASSIGN_OR_RETURN(std::vector<int64_t> types, g.GetIntArray(types_key));
    // The array covers the trunk (n_layer() entries); an MTP block is not in it.
    if (static_cast<int64_t>(types.size()) != c->num_layers)
      return InvalidArgument(g.path() + ": metadata '" + types_key + "' has " + std::to_string(types.size()) +
                             " entries for " + std::to_string(c->num_layers) + " layers");
    for (int64_t t : types) c->indexer.full.push_back(t != 0);
  } else if (c->context_length >= 1048576 && c->arch == Arch::kGlmDsa) {
    c->indexer.full = Glm52IndexerTypes(c->num_layers);
  }
  return Status::Ok();
}

std::vector<GgufKey> GgufKeys(const ModelConfig& c, const std::string& a) {
  if (!c.sparse()) return {};
  std::vector<GgufKey> keys = {
      {a + "attention.indexer.head_count", static_cast<uint32_t>(c.indexer.heads)},
      {a + "attention.indexer.key_length", static_cast<uint32_t>(c.indexer.dim)},
      {a + "attention.indexer.top_k", static_cast<uint32_t>(c.indexer.top_k)},
  };
  if (c.arch != Arch::kDeepseek32) {  // the bool array of glm-dsa (kda-dsa likewise)
    std::vector<bool> full;
    for (int64_t l = 0; l < c.num_layers; ++l) full.push_back(c.indexer.full.empty() || c.indexer.full[l]);
    keys.push_back({a + "attention.indexer.types", full});
  }
  return keys;
}

// The indexer's config.json fields, as GLM-5 and DeepSeek-V3.2 name them
// (spec latent-attention §3.1): index_n_heads, index_head_dim, index_topk;
// GLM-5.2's indexer_types ("full" / "shared"). The RoPE pairing and the
// key LayerNorm's epsilon are fixed per arch (SetIndexerConventions), so
// both formats of a model agree.
Status ReadHf(const JsonField& j, ModelConfig* c) {
  if (!c->latent()) return Status::Ok();
  const JsonField heads = j["index_n_heads"];
  if (!heads.present() || heads.raw()->is_null()) {
    if (c->arch == Arch::kDeepseek32) return heads.Error("the indexer's head count");
    return Status::Ok();
  }
  LINEAGE_ASSIGN_OR_RETURN(c->indexer.heads, heads.Int(1, L::kMaxHeads));
  LINEAGE_ASSIGN_OR_RETURN(c->indexer.dim, j["index_head_dim"].Int(1, L::kMaxHeadDim));
  LINEAGE_ASSIGN_OR_RETURN(c->indexer.top_k, j["index_topk"].Int(1, L::kMaxContext));
  SetIndexerConventions(c);
  const JsonField types = j["indexer_types"];
  if (!types.present() || types.raw()->is_null()) return Status::Ok();
  return ReadLayerChoices(types, c->num_layers, "indexer types", "full", "shared", &c->indexer.full);
}

void WriteHf(const ModelConfig& c, nlohmann::ordered_json& t) {
  if (!c.sparse()) return;
  t["index_head_dim"] = c.indexer.dim;
  t["index_n_heads"] = c.indexer.heads;
  t["index_topk"] = c.indexer.top_k;
  if (!c.indexer.full.empty()) {
    std::vector<std::string> types;
    for (bool full : c.indexer.full) types.push_back(full ? "full" : "shared");
    t["indexer_types"] = types;
  }
}

Status Validate(const ModelConfig& c) {
  if (!c.sparse()) return Status::Ok();
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "indexer_heads", c.indexer.heads, 1, L::kMaxHeads));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "indexer_dim", c.indexer.dim, 1, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "indexer_top_k", c.indexer.top_k, 1, L::kMaxContext));
  if (!c.latent() || c.mla.q_lora_rank <= 0)
    return InvalidArgument(c.source_path + ": a lightning indexer needs latent attention with a query LoRA");
  if (c.mla.qk_rope_dim > c.indexer.dim || c.mla.qk_rope_dim % 2 != 0)
    return InvalidArgument(c.source_path + ": the indexer rotates " + std::to_string(c.mla.qk_rope_dim) + " dims of " +
                           std::to_string(c.indexer.dim) + " (even, at most the head)");
  if (!(c.indexer.norm_eps >= 0 && c.indexer.norm_eps <= L::kMaxRmsEps))
    return InvalidArgument(c.source_path + ": indexer LayerNorm epsilon " + std::to_string(c.indexer.norm_eps) +
                           " is not in [0, 1]");
  if (c.indexer.full.empty()) return Status::Ok();
  if (static_cast<int64_t>(c.indexer.full.size()) != c.num_layers)
    return InvalidArgument(c.source_path + ": indexer types for " + std::to_string(c.indexer.full.size()) +
                           " layers, the model has " + std::to_string(c.num_layers));
  // A shared layer reuses the selection of a full layer below it.
  bool seen_full = false;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    if (c.layers[l].mixer != MixerKind::kSparseLatent) continue;
    if (!c.indexer.full[l] && !seen_full)
      return InvalidArgument(c.source_path + ": latent layer " + std::to_string(l) +
                             " shares the indexer selection of a full layer, but none comes before it");
    seen_full = seen_full || c.indexer.full[l];
  }
  return Status::Ok();
}

// Every field, and which layers run the indexer.
std::vector<double> Fingerprint(const ModelConfig& c) {
  std::vector<double> v = {static_cast<double>(c.indexer.heads), static_cast<double>(c.indexer.dim),
                           static_cast<double>(c.indexer.top_k), static_cast<double>(c.indexer.rope_neox),
                           c.indexer.norm_eps};
  for (int64_t l = 0; l < c.num_layers; ++l) v.push_back(IndexerLayer(c, l));
  return v;
}

const KindConfig kConfig{ReadGguf, ReadHf, GgufKeys, WriteHf, Validate, Fingerprint, UseSparseLayers};

// An MTP block drafts with dense latent attention (it has no indexer).
constexpr MixerKind kDraftKind = MixerKind::kLatent;

}  // namespace

extern const model::MixerKindInfo kModelSpec{"sparse-latent-attention", false, KvFloats, model::NoState,
                                             {Plan, Bind, nullptr}, &kConfig, IndexKeyFloats, &kDraftKind};

}  // namespace lineage::kinds::sparse_latent_attention

namespace lineage::model {

void SetIndexerConventions(ModelConfig* c) {
  c->indexer.rope_neox = c->arch == Arch::kDeepseek32;
  c->indexer.norm_eps = c->arch == Arch::kDeepseek32 ? 1e-6 : 0.0;
}

bool IndexerLayer(const ModelConfig& c, int64_t l) {
  return c.sparse() && l < c.num_layers && c.layers[l].mixer == MixerKind::kSparseLatent &&
         (c.indexer.full.empty() || c.indexer.full[l]);
}

void UseSparseLayers(ModelConfig* c) {
  if (!c->sparse()) return;
  for (LayerPair& p : c->layers)
    if (p.mixer == MixerKind::kLatent) p.mixer = MixerKind::kSparseLatent;
}

}  // namespace lineage::model
