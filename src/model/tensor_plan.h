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
#include "model/tensor_role.h"

namespace lineage::model {


// What a tensor's values are, as the kind that plans it says: how the
// loader keeps it (a matrix is read in place; everything else is a small
// fp32 vector in Weights), how the converters store it, how the random
// model fills it (tools/random_model.h).
enum class Values : uint8_t {
  kMatrix,     // random std 1/sqrt(fan_in)
  kOutMatrix,  // a mixer's output projection: random std 0.25/sqrt(fan_in)
  kEmbedding,  // the embedding and the head: random std 2/sqrt(H)
  kF32Matrix,  // a matrix the files keep in f32 (the MoE router)
  kVector,     // a small vector with a matrix row's random range (conv kernels, the shared expert's gate)
  kNorm,       // a norm's scale, zero-centred (1 + w) in the Qwen3.5 family's HF checkpoints
  kPlainNorm,  // a norm's scale stored as is in every checkpoint
  kDtBias,     // a decay's dt bias: random in [-1, 1)
  kALog,       // A_log: f32 in HF; GGUF and Weights hold -exp(A_log)
  kBias,       // a LayerNorm's bias: random std 0.1
  kScores,     // small score vectors (a router's selection bias, Block AttnRes): random std 0.05
};

// How the routed experts of a MoE layer are stored.
enum class ExpertLayout { kStacked, kMergedGateUp, kPerExpert };

struct PlannedTensor {
  Role role = Role::kEmbed;
  Values values = Values::kMatrix;
  int64_t layer = -1;                  // -1 for model-level tensors
  int64_t expert = -1;                 // the routed expert of a per-expert tensor, else -1
  std::string hf_name;
  std::vector<int64_t> hf_shape;       // PyTorch order, as in a safetensors file
  // Set where the HF checkpoint stores this tensor as the elementwise
  // product of two (hf_name ⊙ hf_factor_name, both of hf_shape): Kimi K3's
  // <x>_res_norm and <x>_res_proj, which the GGUF converter fuses.
  std::string hf_factor_name;
  std::string gguf_name;
  std::vector<int64_t> gguf_shape;     // PyTorch order of the GGUF tensor (ne reversed)
};

// Every tensor of a model with config `c`, in checkpoint order (embedding,
// layers in order, final norm, lm_head when untied), then the MTP block's
// when c.mtp(): layer L's tensors (HF Qwen: mtp.layers.0.*; else layer L's
// own names) and the NextN ones (GGUF blk.L.nextn.*; HF Qwen mtp.fc,
// mtp.pre_fc_norm_*, mtp.norm; HF DeepSeek/GLM model.layers.L.eh_proj,
// enorm, hnorm, shared_head.norm).
// REQUIRES: `c` is within ConfigLimits (the loaders run ValidateConfig
// first), so that no shape product here can overflow.
//
// Most tensors have one counterpart in each layout. Where the two layouts
// cut the same weights differently (MoE experts; Qwen3-Next's GDN input
// projections) the plan lists the tensors of c.format's layout, and for
// those both names and shapes are that layout's; `hf_name` of a Qwen3-Next
// GGUF attn_qkv / attn_gate names the HF in_proj_qkvz it is cut from.
// MoE layouts written: HF qwen3_5_moe kMergedGateUp, HF qwen3_next
// kPerExpert, GGUF kStacked.
std::vector<PlannedTensor> PlanTensors(const ModelConfig& c);

// Where layer l's tensors are named in c.format's layout: "blk.l." (GGUF)
// or the checkpoint's prefix, e.g. "model.layers.l." (HF).
std::string LayerPrefix(const ModelConfig& c, int64_t l);

// The routed-expert tensors of MoE layer `layer` in `layout`, named for
// `format`. The binder tries each layout in turn.
std::vector<PlannedTensor> PlanExperts(const ModelConfig& c, int64_t layer, ExpertLayout layout, FileFormat format);

// The layout PlanTensors uses for c's experts.
ExpertLayout DefaultExpertLayout(const ModelConfig& c);

// True for the routed-expert roles (kExpGate .. kExpGateUp).
bool IsExpertRole(Role r);

// True for tensors kept as a small fp32 vector in Weights (all but matrices).
bool IsSmall(const PlannedTensor& p);
// True for norm weights that HF qwen3_5 stores zero-centred (scale = 1 + w);
// the GDN output norm is plain (spec §4.1).
bool IsZeroCentredNorm(const PlannedTensor& p, Arch arch);

// The GGUF architecture string ("qwen35", "qwen3", "qwen35moe", "qwen3next",
// "kimi-linear", "glm-dsa", "deepseek32", "kda-dsa", "kimi-k3").
const char* GgufArchName(Arch a);

}  // namespace lineage::model
