// What a layer kind's binder (layer_kinds.h, KindTensors) is given: one
// found tensor of its plan, or, once all are bound, the layer and the file's
// lookup; and the checks BindWeights makes that a kind's own lookups repeat.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor_view.h"
#include "model/bind_weights.h"
#include "model/config.h"
#include "model/tensor_plan.h"

namespace lineage::model {

struct BoundTensor {
  const ModelConfig& c;
  const PlannedTensor& plan;
  const TensorView& view;     // as found in the file, shape-checked
  std::vector<float>& small;  // IsSmall: its fp32 values, conventions applied (weights.h); may be moved from
};

struct LayerBinder {
  const ModelConfig& c;
  int64_t layer;
  const TensorLookup& lookup;
};

// A planned tensor looked up in c.format's layout and shape-checked.
Result<TensorView> FetchPlanned(const ModelConfig& c, const PlannedTensor& p, const TensorLookup& lookup);

// The error for a tensor sized for another number of experts than the
// config declares (expert_count / num_experts).
Status ExpertCountError(const FoundTensor& f, const std::string& name, int64_t declared);

// "[expert e]", the suffix of a per-expert slice's name.
std::string ExpertSuffix(int64_t e);

}  // namespace lineage::model
