// BindWeights: turns the tensors of one model file set into Weights.
//
// Every tensor of PlanTensors(config) is looked up by its name in the file's
// layout (HF names when config.format is kSafetensors, GGUF names
// otherwise), its shape is checked; any DType is accepted (all have kernels).
// Large matrices stay views; small vectors are decoded to fp32 with the HF
// conventions folded (weights.h): (1 + w) for zero-centred qwen3_5 norms,
// -exp(A_log) for the GDN decay. GGUF tensors already hold both. The
// model-wide tensors bind here; each layer's go to its mixer's and its
// feed-forward's kind (model/layer_kinds.h, src/kinds/), which also finish
// the layer: the MoE kind finds the routed experts in whichever layout the
// file has (stacked, merged gate_up, per expert; tensor_plan.h) and slices
// them per expert, Gated DeltaNet cuts Qwen3-Next's fused projections into
// row blocks (weights.h). A router or expert tensor sized for another
// expert count than the config declares is an InvalidArgument naming both
// counts.
#pragma once

#include <functional>
#include <string>

#include "core/status.h"
#include "core/tensor_view.h"
#include "model/config.h"
#include "model/weights.h"

namespace lineage::model {

// A tensor found in a file, and that file's path for error messages.
struct FoundTensor {
  TensorView view;
  std::string file;
};

// Finds a tensor by its exact name; NotFound (naming the file) when absent.
using TensorLookup = std::function<Result<FoundTensor>(const std::string& name)>;

Result<Weights> BindWeights(const ModelConfig& config, const TensorLookup& lookup);

}  // namespace lineage::model
