#include "engine/layer_table.h"

#include <algorithm>

#define LINEAGE_KIND_SYMBOL kEngineStep
#define LINEAGE_KIND_MIXER_TYPE ::lineage::engine::MixerStep
#define LINEAGE_KIND_FFN_TYPE ::lineage::engine::FfnStep
#include "kinds/registry.inc"

namespace lineage::engine {
namespace {

using model::MixerKind;

const MixerStep& Step(MixerKind kind) { return *kinds::kMixerTable[static_cast<int>(kind)]; }

}  // namespace

void RunMixer(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, LayerSlots& slots,
              const StepContext& ctx, const float* xn, float* out) {
  const MixerKind kind = c.mixer(l);
  LayerSlots at = slots;
  at.index = model::SideFloats(c, l) > 0 ? slots.index++ : -1;
  if (model::Info(kind).recurrent) {
    ++slots.state;
  } else {
    ++slots.kv;
  }
  Step(kind).run(w, at, ctx, xn, out);
}

void RunFfn(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, const StepContext& ctx,
            const float* xn, float* out) {
  kinds::kFfnTable[static_cast<int>(c.ffn(l))]->run(w, ctx, xn, out);
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

}  // namespace lineage::engine
