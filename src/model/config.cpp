#include "model/config.h"

#include <algorithm>
#include <cmath>

#include "core/checked_math.h"
#include "model/tensor_plan.h"

namespace lineage::model {

int64_t ModelConfig::num_full_layers() const { return num_layers - num_linear_layers(); }

int64_t ModelConfig::num_linear_layers() const {
  int64_t n = 0;
  for (int64_t l = 0; l < num_layers; ++l) n += recurrent(l);
  return n;
}

bool ModelConfig::recurrent(int64_t l) const { return l < num_layers && Info(layers[l].mixer).recurrent; }

MixerKind ModelConfig::mixer(int64_t l) const {
  if (l < num_layers) return layers[l].mixer;
  MixerKind attention = KindsOf(arch).attention;
  for (const LayerPair& p : layers)
    if (!Info(p.mixer).recurrent) {
      attention = p.mixer;
      break;
    }
  const MixerKind* draft = Info(attention).draft_kind;
  return draft ? *draft : attention;
}

ArchKinds KindsOf(Arch a) {
  switch (a) {
    case Arch::kKimiLinear:
    case Arch::kGlmDsa:
    case Arch::kDeepseek32:
    case Arch::kKdaDsa:
    case Arch::kKimiK3: return {MixerKind::kKimiDelta, MixerKind::kLatent, FfnKind::kDeepseekMoe};
    case Arch::kQwen3_5Moe:
    case Arch::kQwen3Next: return {MixerKind::kGatedDeltaNet, MixerKind::kAttention, FfnKind::kMoe};
    case Arch::kQwen3_5:
    case Arch::kQwen3: break;
  }
  return {MixerKind::kGatedDeltaNet, MixerKind::kAttention, FfnKind::kDense};
}

std::vector<LayerPair> StackLayers(Arch a, const std::vector<LayerKind>& flags) {
  const ArchKinds k = KindsOf(a);
  std::vector<LayerPair> layers;
  for (LayerKind f : flags) layers.push_back({f == LayerKind::kLinearAttention ? k.recurrent : k.attention, k.ffn});
  return layers;
}

std::vector<LayerPair> AttentionLayers(Arch a, int64_t num_layers) {
  return StackLayers(a, std::vector<LayerKind>(static_cast<size_t>(num_layers), LayerKind::kFullAttention));
}

std::vector<LayerKind> LayerFlags(const ModelConfig& c) {
  std::vector<LayerKind> flags;
  for (int64_t l = 0; l < c.num_layers; ++l)
    flags.push_back(c.recurrent(l) ? LayerKind::kLinearAttention : LayerKind::kFullAttention);
  return flags;
}

int64_t ModelConfig::kv_bytes_per_token() const {
  int64_t floats = 0;
  for (int64_t l = 0; l < num_layers; ++l) floats += Info(mixer(l)).kv_floats_per_token(*this, l);
  return floats * 4;
}

int64_t ModelConfig::recurrent_bytes() const {
  int64_t floats = 0;
  for (int64_t l = 0; l < num_layers; ++l) floats += Info(mixer(l)).state_floats(*this);
  return floats * 4;
}

const char* ArchName(Arch a) {
  switch (a) {
    case Arch::kQwen3_5: return "qwen3_5";
    case Arch::kQwen3: return "qwen3";
    case Arch::kQwen3_5Moe: return "qwen3_5_moe";
    case Arch::kQwen3Next: return "qwen3_next";
    case Arch::kKimiLinear: return "kimi_linear";
    case Arch::kGlmDsa: return "glm_dsa";
    case Arch::kDeepseek32: return "deepseek32";
    case Arch::kKdaDsa: return "kda_dsa";
    case Arch::kKimiK3: return "kimi_k3";
  }
  return "?";
}

std::string ArchNameList() {
  std::string out;
  for (Arch a : kAllArchs) out += (out.empty() ? "" : ", ") + std::string(ArchName(a));
  return out;
}

Status CheckRange(const ModelConfig& c, const char* field, int64_t v, int64_t min, int64_t max) {
  if (v >= min && v <= max) return Status::Ok();
  return InvalidArgument(c.source_path + ": " + field + " is " + std::to_string(v) + ", expected an integer in [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
}

namespace {

Status CheckPositive(const ModelConfig& c, const char* field, double v, double max) {
  if (std::isfinite(v) && v > 0 && v <= max) return Status::Ok();
  return InvalidArgument(c.source_path + ": " + field + " is " + std::to_string(v) +
                         ", expected a finite number in (0, " + std::to_string(max) + "]");
}

}  // namespace

Status ValidateConfig(const ModelConfig& c) {
  using L = ConfigLimits;
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "num_layers", c.num_layers, 1, L::kMaxLayers));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "hidden", c.hidden, 1, L::kMaxHidden));
  // A MoE model has no dense FFN; its stated width is informative only.
  const bool dense_ffn = !IsMoeArch(c.arch) || c.experts.leading_dense_layers > 0;
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "intermediate", c.intermediate, dense_ffn ? 1 : 0, L::kMaxIntermediate));
  if (c.arch == Arch::kKimiK3)  // Block AttnRes
    LINEAGE_RETURN_IF_ERROR(CheckRange(c, "attn_res_block", c.attn_res_block, 1, c.num_layers));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "vocab", c.vocab, 1, L::kMaxVocab));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "context_length", c.context_length, 0, L::kMaxContext));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "num_heads", c.num_heads, 1, L::kMaxHeads));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "num_kv_heads", c.num_kv_heads, 1, c.num_heads));
  if (c.num_heads % c.num_kv_heads != 0)
    return InvalidArgument(c.source_path + ": " + std::to_string(c.num_heads) +
                           " attention heads are not a multiple of " + std::to_string(c.num_kv_heads) + " KV heads");
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "head_dim", c.head_dim, 1, L::kMaxHeadDim));
  LINEAGE_RETURN_IF_ERROR(CheckRange(c, "rope_dims", c.rope_dims, 1, c.head_dim));
  LINEAGE_RETURN_IF_ERROR(CheckPositive(c, "rms_eps", c.rms_eps, L::kMaxRmsEps));
  LINEAGE_RETURN_IF_ERROR(CheckPositive(c, "rope_theta", c.rope_theta, L::kMaxRopeTheta));
  if (static_cast<int64_t>(c.layers.size()) != c.num_layers)
    return Internal(c.source_path + ": " + std::to_string(c.layers.size()) + " layer kinds for " +
                    std::to_string(c.num_layers) + " layers");
  for (const KindConfig* k : KindConfigs())  // the kinds' own fields (model/layer_kinds.h)
    if (k->validate) LINEAGE_RETURN_IF_ERROR(k->validate(c));
  for (int64_t id : c.eos_token_ids) LINEAGE_RETURN_IF_ERROR(CheckRange(c, "eos_token_id", id, 0, L::kMaxTokenId));
  if (c.bos_token_id != -1) LINEAGE_RETURN_IF_ERROR(CheckRange(c, "bos_token_id", c.bos_token_id, 0, L::kMaxTokenId));
  // The limits keep each tensor far below 2^63 elements; the sum over a
  // whole model is checked all the same, since it sizes what gets mapped.
  int64_t total = 0;
  for (const PlannedTensor& t : PlanTensors(c)) {
    std::optional<int64_t> n = int64_t{1};
    for (int64_t d : t.hf_shape) n = n ? CheckedMul(*n, d) : std::nullopt;
    std::optional<int64_t> sum = n ? CheckedAdd(total, *n) : std::nullopt;
    if (!sum) return InvalidArgument(c.source_path + ": the model's parameter count overflows 64 bits");
    total = *sum;
  }
  return Status::Ok();
}

}  // namespace lineage::model
