#include "model/layer_kinds.h"

#include "model/config.h"

namespace lineage {
namespace kinds {
#define LINEAGE_MIXER(kind, folder) \
  namespace folder {                \
  extern const model::MixerKindInfo kModelSpec; \
  }
#define LINEAGE_FFN(kind, folder) \
  namespace folder {              \
  extern const model::FfnKindInfo kModelSpec; \
  }
#include "kinds/kinds.def"
}  // namespace kinds

namespace model {
namespace {

const MixerKindInfo* const kMixers[] = {
#define LINEAGE_MIXER(kind, folder) &kinds::folder::kModelSpec,
#include "kinds/kinds.def"
};

const FfnKindInfo* const kFfns[] = {
#define LINEAGE_FFN(kind, folder) &kinds::folder::kModelSpec,
#include "kinds/kinds.def"
};

}  // namespace

int64_t DeltaStateFloats(const ModelConfig& c) {
  return (c.conv_kernel - 1) * c.conv_dim() + c.lin_num_v_heads * c.lin_k_dim * c.lin_v_dim;
}

const MixerKindInfo& Info(MixerKind k) { return *kMixers[static_cast<int>(k)]; }
const FfnKindInfo& Info(FfnKind k) { return *kFfns[static_cast<int>(k)]; }

}  // namespace model
}  // namespace lineage
