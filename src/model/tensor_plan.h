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
  // Qwen3-Next fused GDN input projections (spec §2.1): HF in_proj_qkvz,
  // and in_proj_ba (GGUF ssm_ba), both grouped per key head.
  kLinQkvz, kLinBa,
  // Sparse MoE (spec §4.3). Routed experts come in one of three layouts:
  // 3-D [E, rows, cols] per matrix (kExpGate / kExpUp / kExpDown), 3-D with
  // gate and up merged [E, 2 I, H] (kExpGateUp), or one 2-D tensor per
  // expert (kExpGate / kExpUp / kExpDown with `expert` >= 0).
  kRouter, kExpGate, kExpUp, kExpDown, kExpGateUp,
  kShGate, kShUp, kShDown, kShGateInp,
  // Kimi Linear (spec §7.2-§7.5). KDA: separate q/k/v projections and convs,
  // the low-rank decay (f_a, f_b) and output gate (g_a, g_b) projections.
  kKdaQ, kKdaK, kKdaV, kKdaQConv, kKdaKConv, kKdaVConv, kKdaFA, kKdaFB, kKdaB, kKdaALog, kKdaDtBias,
  kKdaGA, kKdaGB, kKdaNorm, kKdaOut,
  // MLA: q, the latent down-projection with k_pe, its norm; HF kv_b_proj or
  // GGUF's split attn_k_b (per head W_k^T) and attn_v_b; the output.
  kMlaQ, kMlaKvA, kMlaKvANorm, kMlaKvB, kMlaKB, kMlaVB, kMlaOut,
  // DeepSeek-V3 router bias (e_score_correction_bias), selection only.
  kRouterBias,
  // glm-dsa / deepseek32 latent attention (spec latent-attention §3.2): the
  // query LoRA, and the lightning indexer of a full layer.
  kMlaQA, kMlaQANorm, kMlaQB,
  kIdxQB, kIdxK, kIdxKNorm, kIdxKNormBias, kIdxProj,
  // Kimi K3 (spec latent-attention §2, §3.4): the full-rank KDA output gate,
  // the MLA output gate, the latent MoE's projections and norm, Block
  // AttnRes' score vectors.
  kKdaGFull, kMlaGate, kMoeLatentDown, kMoeLatentUp, kMoeLatentNorm,
  kAttnResScore, kFfnResScore, kOutputResScore,
  // The MTP (NextN) block's own tensors (its layer tensors are the roles
  // above at layer L): eh_proj over [enorm(embed) | hnorm(h)], the two
  // norms, and the norm before the shared head.
  kMtpEhProj, kMtpENorm, kMtpHNorm, kMtpHeadNorm,
};

// How the routed experts of a MoE layer are stored.
enum class ExpertLayout { kStacked, kMergedGateUp, kPerExpert };

struct PlannedTensor {
  Role role = Role::kEmbed;
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

// True for roles stored as a small fp32 vector in Weights (norms, conv, A, dt).
bool IsSmallRole(Role r);
// True for norm weights that HF qwen3_5 stores zero-centred (scale = 1 + w);
// the GDN output norm is plain (spec §4.1).
bool IsZeroCentredNorm(Role r, Arch arch);

// The GGUF architecture string ("qwen35", "qwen3", "qwen35moe", "qwen3next",
// "kimi-linear", "glm-dsa", "deepseek32", "kda-dsa", "kimi-k3").
const char* GgufArchName(Arch a);

}  // namespace lineage::model
