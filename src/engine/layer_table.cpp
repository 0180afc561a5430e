#include "engine/layer_table.h"

#include <algorithm>

namespace lineage {
namespace kinds {
#define LINEAGE_MIXER(kind, folder) \
  namespace folder {                \
  extern const engine::MixerStep kEngineStep; \
  }
#define LINEAGE_FFN(kind, folder) \
  namespace folder {              \
  extern const engine::FfnStep kEngineStep; \
  }
#include "kinds/kinds.def"
}  // namespace kinds

namespace engine {
namespace {

using model::MixerKind;

// In model::MixerKind / FfnKind order.
const MixerStep* const kMixers[] = {
#define LINEAGE_MIXER(kind, folder) &kinds::folder::kEngineStep,
#include "kinds/kinds.def"
};
const FfnStep* const kFfns[] = {
#define LINEAGE_FFN(kind, folder) &kinds::folder::kEngineStep,
#include "kinds/kinds.def"
};

const MixerStep& Step(MixerKind kind) { return *kMixers[static_cast<int>(kind)]; }

}  // namespace

void RunMixer(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, LayerSlots& slots,
              const StepContext& ctx, const float* xn, float* out) {
  const MixerKind kind = c.mixer(l);
  LayerSlots at = slots;
  at.index = c.indexer_layer(l) ? slots.index++ : -1;
  if (model::Info(kind).recurrent) {
    ++slots.state;
  } else {
    ++slots.kv;
  }
  Step(kind).run(w, at, ctx, xn, out);
}

void RunFfn(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, const StepContext& ctx,
            const float* xn, float* out) {
  kFfns[static_cast<int>(c.ffn(l))]->run(w, ctx, xn, out);
}

std::vector<const TensorView*> MixerMatrices(MixerKind kind, const model::LayerWeights& w) {
  std::vector<const TensorView*> out = Step(kind).matrices(w);
  out.erase(std::remove_if(out.begin(), out.end(), [](const TensorView* t) { return !t->valid(); }), out.end());
  return out;
}

std::vector<std::pair<std::string, const std::vector<float>*>> MixerVectors(MixerKind kind,
                                                                             const model::LayerWeights& w) {
  return Step(kind).vectors(w);
}

}  // namespace engine
}  // namespace lineage
