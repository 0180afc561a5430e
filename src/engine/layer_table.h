// What the engine does with each layer kind (model/layer_kinds.h): the
// function that runs a mixer or a feed-forward of that kind in a step, and
// the weights each kind streams (for the benchmark's byte counts and the
// disk tier's model fingerprint). Each kind gives its MixerStep / FfnStep
// from its folder's engine/ part (src/kinds/KIND/engine/, beside its
// forward); layer_table.cpp makes the tables from src/kinds/kinds.def.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/layers.h"
#include "model/weights.h"

namespace lineage::engine {

// Where a layer keeps its per-sequence data, counted over the layers in
// order: recurrent layers take state slots (RecurrentState), KV layers page
// layers (KvLayout), full sparse layers indexer slots. The forward walks the
// layers with one of these and each RunMixer takes its layer's slots.
struct LayerSlots {
  int64_t state = 0, kv = 0, index = 0;
};

// A mixer kind's part of a step: run it at its slots (a recurrent kind takes
// a state slot, one with KV rows a page layer; model::Info(kind).recurrent),
// and list the matrices it streams on every step (absent views included,
// the table skips them) and its small fp32 vectors with their names.
struct MixerStep {
  void (*run)(const model::LayerWeights& w, const LayerSlots& at, const StepContext& ctx, const float* xn,
              float* out);
  std::vector<const TensorView*> (*matrices)(const model::LayerWeights& w);
  std::vector<std::pair<std::string, const std::vector<float>*>> (*vectors)(const model::LayerWeights& w);
};

// A feed-forward kind's part of a step.
struct FfnStep {
  void (*run)(const model::LayerWeights& w, const StepContext& ctx, const float* xn, float* out);
};

// Runs layer l's mixer on the normed rows xn into out, advancing `slots`.
void RunMixer(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, LayerSlots& slots,
              const StepContext& ctx, const float* xn, float* out);
// Runs layer l's feed-forward.
void RunFfn(const model::ModelConfig& c, const model::LayerWeights& w, int64_t l, const StepContext& ctx,
            const float* xn, float* out);

// The matrices layer l's mixer streams on every step (absent views are
// skipped), and its small fp32 vectors with their names.
std::vector<const TensorView*> MixerMatrices(model::MixerKind kind, const model::LayerWeights& w);
std::vector<std::pair<std::string, const std::vector<float>*>> MixerVectors(model::MixerKind kind,
                                                                             const model::LayerWeights& w);

}  // namespace lineage::engine
