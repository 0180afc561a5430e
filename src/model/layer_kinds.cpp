#include "model/layer_kinds.h"

#include "model/config.h"

#define LINEAGE_KIND_SYMBOL kModelSpec
#define LINEAGE_KIND_MIXER_TYPE ::lineage::model::MixerKindInfo
#define LINEAGE_KIND_FFN_TYPE ::lineage::model::FfnKindInfo
#include "kinds/registry.inc"

namespace lineage::model {

int64_t DeltaStateFloats(const ModelConfig& c) {
  return (c.delta.conv_kernel - 1) * c.delta.conv_dim() + c.delta.v_heads * c.delta.k_dim * c.delta.v_dim;
}

const MixerKindInfo& Info(MixerKind k) { return *kinds::kMixerTable[static_cast<int>(k)]; }
const FfnKindInfo& Info(FfnKind k) { return *kinds::kFfnTable[static_cast<int>(k)]; }

int64_t SideFloats(const ModelConfig& c, int64_t layer) {
  const MixerKindInfo& k = Info(c.mixer(layer));
  return k.side_floats_per_token ? k.side_floats_per_token(c, layer) : 0;
}

namespace {

// The trunk's layers, and the MTP block where the model binds one.
int64_t LayersWithDraft(const ModelConfig& c) { return c.num_layers + (c.mtp() ? 1 : 0); }

}  // namespace

bool UsesMixer(const ModelConfig& c, MixerKind k) {
  for (int64_t l = 0; l < LayersWithDraft(c); ++l)
    if (c.mixer(l) == k) return true;
  return false;
}

bool UsesFfn(const ModelConfig& c, FfnKind k) {
  for (int64_t l = 0; l < LayersWithDraft(c); ++l)
    if (c.ffn(l) == k) return true;
  return false;
}

void RefineLayers(ModelConfig* c) {
  for (const KindConfig* k : KindConfigs())
    if (k->refine_layers) k->refine_layers(c);
}

const std::vector<const KindConfig*>& KindConfigs() {
  static const std::vector<const KindConfig*> configs = [] {
    std::vector<const KindConfig*> out;
    for (const MixerKindInfo* k : kinds::kMixerTable)
      if (k->config) out.push_back(k->config);
    for (const FfnKindInfo* k : kinds::kFfnTable)
      if (k->config) out.push_back(k->config);
    return out;
  }();
  return configs;
}

}  // namespace lineage::model
