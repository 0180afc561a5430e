// BindWeights: turns the tensors of one model file set into Weights.
//
// Every tensor of PlanTensors(config) is looked up by its name in the file's
// layout (HF names when config.format is kSafetensors, GGUF names
// otherwise), its shape is checked; any DType is accepted (all have kernels).
// Large matrices stay views; small vectors are decoded to fp32 with the HF
// conventions folded (weights.h): (1 + w) for zero-centred qwen3_5 norms,
// -exp(A_log) for the GDN decay. GGUF tensors already hold both.
// MoE layers: the routed experts are found in whichever layout the file has
// (stacked, merged gate_up, per expert; tensor_plan.h) and sliced per
// expert; a router or expert tensor sized for another expert count than the
// config declares is an InvalidArgument naming both counts. Qwen3-Next's
// fused GDN projections are also cut into row blocks (weights.h).
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
