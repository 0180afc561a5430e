#include "model/layer_kinds.h"

#include "model/config.h"

#define LINEAGE_KIND_SYMBOL kModelSpec
#define LINEAGE_KIND_MIXER_TYPE ::lineage::model::MixerKindInfo
#define LINEAGE_KIND_FFN_TYPE ::lineage::model::FfnKindInfo
#include "kinds/registry.inc"

namespace lineage::model {

int64_t DeltaStateFloats(const ModelConfig& c) {
  return (c.conv_kernel - 1) * c.conv_dim() + c.lin_num_v_heads * c.lin_k_dim * c.lin_v_dim;
}

const MixerKindInfo& Info(MixerKind k) { return *kinds::kMixerTable[static_cast<int>(k)]; }
const FfnKindInfo& Info(FfnKind k) { return *kinds::kFfnTable[static_cast<int>(k)]; }

int64_t SideFloats(const ModelConfig& c, int64_t layer) {
  const MixerKindInfo& k = Info(c.mixer(layer));
  return k.side_floats_per_token ? k.side_floats_per_token(c, layer) : 0;
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
