// TensorPlanner: how a layer kind's spec (layer_kinds.h) lists its tensors
// for PlanTensors (tensor_plan.h): each with its role, its HF name and shape
// and its GGUF name and shape, in checkpoint order. Names are given as the
// suffix after the layer's prefix, which the planner adds for the layout.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"
#include "model/tensor_plan.h"

namespace lineage::model {

class TensorPlanner {
 public:
  explicit TensorPlanner(const ModelConfig& c) : c(c) {}

  const ModelConfig& c;
  std::vector<PlannedTensor> out;

  // A tensor whose HF and GGUF forms differ in name and shape.
  // `values` says what it holds (tensor_plan.h): a matrix unless told.
  void Add(Role role, int64_t layer, const std::string& hf_suffix, std::vector<int64_t> hf_shape,
           const std::string& gguf_suffix, std::vector<int64_t> gguf_shape, Values values = Values::kMatrix);
  // Same shape in both layouts.
  void Add(Role role, int64_t layer, const std::string& hf_suffix, const std::string& gguf_suffix,
           std::vector<int64_t> shape, Values values = Values::kMatrix) {
    Add(role, layer, hf_suffix, shape, gguf_suffix, shape, values);
  }
  // A tensor of one layout only (c.format's): both names and shapes are that layout's.
  void AddOwn(Role role, int64_t layer, int64_t expert, const std::string& suffix, std::vector<int64_t> shape);
  // A vector the HF checkpoint stores as <hf_stem>_norm ⊙ <hf_stem>_proj
  // (PlannedTensor::hf_factor_name).
  void AddFused(Role role, int64_t layer, const std::string& hf_stem, const std::string& gguf_suffix, int64_t n);
};

}  // namespace lineage::model
