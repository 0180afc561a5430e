// TensorPlan: the list of tensors a model of a given config holds, each with
// its role, its layer, and its name and shape in both file layouts.
//
// One table serves the random generator, both writers and both loaders, so
// the names a writer emits and the names a loader looks up cannot drift.
//
// HF names follow transformers (spec §5.1): prefix `model.language_model.`
// for qwen3_5, `model.` for qwen3; `lm_head.weight` only when untied.
// GGUF names follow llama.cpp (spec §5.2); shapes here are always in PyTorch
// order (the GGUF ne order is the reverse).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace lineage::model {

enum class Role {
  kEmbed, kLmHead, kFinalNorm,
  kInputNorm, kPostNorm,
  // Gated DeltaNet (qwen3_5 linear layers).
  kLinQkv, kLinZ, kLinB, kLinA, kLinConv, kLinDtBias, kLinALog, kLinNorm, kLinOut,
  // Attention (both archs).
  kAttnQ, kAttnK, kAttnV, kAttnO, kAttnQNorm, kAttnKNorm,
  kFfnGate, kFfnUp, kFfnDown,
};

struct PlannedTensor {
  Role role = Role::kEmbed;
  int64_t layer = -1;                  // -1 for model-level tensors
  std::string hf_name;
  std::vector<int64_t> hf_shape;       // PyTorch order, as in a safetensors file
  std::string gguf_name;
  std::vector<int64_t> gguf_shape;     // PyTorch order of the GGUF tensor (ne reversed)
};

// Every tensor of a model with config `c`, in checkpoint order (embedding,
// layers in order, final norm, lm_head when untied).
// REQUIRES: `c` is within ConfigLimits (the loaders run ValidateConfig
// first), so that no shape product here can overflow.
std::vector<PlannedTensor> PlanTensors(const ModelConfig& c);

// True for roles stored as a small fp32 vector in Weights (norms, conv, A, dt).
bool IsSmallRole(Role r);
// True for norm weights that HF qwen3_5 stores zero-centred (scale = 1 + w);
// the GDN output norm is plain (spec §4.1).
bool IsZeroCentredNorm(Role r, Arch arch);

// The GGUF architecture string ("qwen35", "qwen3").
const char* GgufArchName(Arch a);

}  // namespace lineage::model
