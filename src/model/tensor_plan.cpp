#include "model/tensor_plan.h"

#include "model/layer_kinds.h"
#include "model/tensor_planner.h"

namespace lineage::model {
namespace {

// Qwen3.5 and Kimi K3 are multimodal checkpoints whose text model sits
// under a prefix.
std::string HfModelPrefix(const ModelConfig& c) {
  if (c.arch == Arch::kKimiK3) return "language_model.model.";
  return c.arch == Arch::kQwen3_5 || c.arch == Arch::kQwen3_5Moe ? "model.language_model." : "model.";
}

}  // namespace

void TensorPlanner::Add(Role role, int64_t layer, const std::string& hf_suffix, std::vector<int64_t> hf_shape,
                        const std::string& gguf_suffix, std::vector<int64_t> gguf_shape, Values values) {
  PlannedTensor t;
  t.role = role;
  t.values = values;
  t.layer = layer;
  std::string hf_layer = layer >= 0 ? "layers." + std::to_string(layer) + "." : "";
  std::string gguf_layer = layer >= 0 ? "blk." + std::to_string(layer) + "." : "";
  // Qwen keeps its MTP blocks apart, under mtp.layers.i (no model prefix).
  const bool qwen_mtp = layer >= c.num_layers && IsHybrid(c.arch);
  t.hf_name = role == Role::kLmHead ? hf_suffix  // the head sits outside the model prefix
              : qwen_mtp            ? "mtp.layers." + std::to_string(layer - c.num_layers) + "." + hf_suffix
                                    : HfModelPrefix(c) + hf_layer + hf_suffix;
  t.hf_shape = std::move(hf_shape);
  t.gguf_name = gguf_layer + gguf_suffix;
  t.gguf_shape = std::move(gguf_shape);
  out.push_back(std::move(t));
}

void TensorPlanner::AddOwn(Role role, int64_t layer, int64_t expert, const std::string& suffix,
                           std::vector<int64_t> shape) {
  Add(role, layer, suffix, shape, suffix, shape);
  out.back().expert = expert;
  if (c.format == FileFormat::kGguf) out.back().hf_name = out.back().gguf_name;
  else out.back().gguf_name = out.back().hf_name;
}

void TensorPlanner::AddFused(Role role, int64_t layer, const std::string& hf_stem, const std::string& gguf_suffix,
                             int64_t n) {
  Add(role, layer, hf_stem + "_norm.weight", gguf_suffix, {n}, Values::kScores);
  const std::string& norm = out.back().hf_name;
  out.back().hf_factor_name = norm.substr(0, norm.size() - std::string("_norm.weight").size()) + "_proj.weight";
}

namespace {

// One layer's tensors: its norms, mixer and feed-forward by kind.
void PlanLayer(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  p.Add(Role::kInputNorm, l, "input_layernorm.weight", "attn_norm.weight", {H}, Values::kNorm);
  if (c.attn_res_block > 0) {
    p.AddFused(Role::kAttnResScore, l, "self_attention_res", "attn_res_score.weight", H);
    p.AddFused(Role::kFfnResScore, l, "mlp_res", "ffn_res_score.weight", H);
  }
  Info(c.mixer(l)).tensors.plan(p, l);
  // llama.cpp maps post_attention_layernorm to ATTN_POST_NORM for qwen35 and
  // to FFN_NORM for the others (spec §5.2, §11).
  p.Add(Role::kPostNorm, l, "post_attention_layernorm.weight",
        IsHybrid(c.arch) ? "post_attention_norm.weight" : "ffn_norm.weight", {H}, Values::kNorm);
  Info(c.ffn(l)).tensors.plan(p, l);
}

// The first MTP block (spec hybrid-qwen §5.2, latent-attention §1.9).
void PlanMtp(TensorPlanner& p) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, l = c.num_layers;
  PlanLayer(p, l);
  const bool qwen = IsHybrid(c.arch);
  auto add = [&](Role role, const std::string& qwen_hf, const std::string& hf, const std::string& gguf,
                 std::vector<int64_t> shape, Values values) {
    p.Add(role, l, hf, "nextn." + gguf, std::move(shape), values);
    if (qwen) p.out.back().hf_name = "mtp." + qwen_hf;
  };
  add(Role::kMtpEhProj, "fc.weight", "eh_proj.weight", "eh_proj.weight", {H, 2 * H}, Values::kMatrix);
  add(Role::kMtpENorm, "pre_fc_norm_embedding.weight", "enorm.weight", "enorm.weight", {H}, Values::kNorm);
  add(Role::kMtpHNorm, "pre_fc_norm_hidden.weight", "hnorm.weight", "hnorm.weight", {H}, Values::kNorm);
  add(Role::kMtpHeadNorm, "norm.weight", "shared_head.norm.weight", "shared_head_norm.weight", {H}, Values::kNorm);
}

}  // namespace

std::vector<PlannedTensor> PlanTensors(const ModelConfig& c) {
  TensorPlanner p(c);
  const int64_t H = c.hidden, V = c.vocab;
  p.Add(Role::kEmbed, -1, "embed_tokens.weight", "token_embd.weight", {V, H}, Values::kEmbedding);
  for (int64_t l = 0; l < c.num_layers; ++l) PlanLayer(p, l);
  p.Add(Role::kFinalNorm, -1, "norm.weight", "output_norm.weight", {H}, Values::kNorm);
  if (c.attn_res_block > 0) p.AddFused(Role::kOutputResScore, -1, "output_attn_res", "output_res_score.weight", H);
  if (!c.tied_embeddings) {
    // K3 keeps its head under the text model's prefix too.
    const char* head = c.arch == Arch::kKimiK3 ? "language_model.lm_head.weight" : "lm_head.weight";
    p.Add(Role::kLmHead, -1, head, "output.weight", {V, H}, Values::kEmbedding);
  }
  if (c.mtp()) PlanMtp(p);
  return std::move(p.out);
}

std::string LayerPrefix(const ModelConfig& c, int64_t l) {
  const std::string n = std::to_string(l) + ".";
  return c.format == FileFormat::kGguf ? "blk." + n : HfModelPrefix(c) + "layers." + n;
}

ExpertLayout DefaultExpertLayout(const ModelConfig& c) {
  if (c.format == FileFormat::kGguf) return ExpertLayout::kStacked;
  return c.arch == Arch::kQwen3Next ? ExpertLayout::kPerExpert : ExpertLayout::kMergedGateUp;
}

std::vector<PlannedTensor> PlanExperts(const ModelConfig& base, int64_t l, ExpertLayout layout, FileFormat format) {
  ModelConfig c = base;
  c.format = format;
  TensorPlanner p(c);
  const int64_t E = c.experts.count, I = c.experts.width, H = c.hidden;
  const bool gguf = format == FileFormat::kGguf;
  switch (layout) {
    case ExpertLayout::kStacked:
      if (gguf) {
        p.AddOwn(Role::kExpGate, l, -1, "ffn_gate_exps.weight", {E, I, H});
        p.AddOwn(Role::kExpUp, l, -1, "ffn_up_exps.weight", {E, I, H});
        p.AddOwn(Role::kExpDown, l, -1, "ffn_down_exps.weight", {E, H, I});
      } else {  // no HF checkpoint stacks gate and up apart; accepted all the same
        p.AddOwn(Role::kExpGate, l, -1, "mlp.experts.gate_proj", {E, I, H});
        p.AddOwn(Role::kExpUp, l, -1, "mlp.experts.up_proj", {E, I, H});
        p.AddOwn(Role::kExpDown, l, -1, "mlp.experts.down_proj", {E, H, I});
      }
      break;
    case ExpertLayout::kMergedGateUp:
      p.AddOwn(Role::kExpGateUp, l, -1, gguf ? "ffn_gate_up_exps.weight" : "mlp.experts.gate_up_proj", {E, 2 * I, H});
      p.AddOwn(Role::kExpDown, l, -1, gguf ? "ffn_down_exps.weight" : "mlp.experts.down_proj", {E, H, I});
      break;
    case ExpertLayout::kPerExpert:
      if (gguf) break;  // GGUF always stacks experts
      for (int64_t e = 0; e < E; ++e) {
        const std::string x = "mlp.experts." + std::to_string(e) + ".";
        p.AddOwn(Role::kExpGate, l, e, x + "gate_proj.weight", {I, H});
        p.AddOwn(Role::kExpUp, l, e, x + "up_proj.weight", {I, H});
        p.AddOwn(Role::kExpDown, l, e, x + "down_proj.weight", {H, I});
      }
      break;
  }
  return std::move(p.out);
}

bool IsExpertRole(Role r) {
  return r == Role::kExpGate || r == Role::kExpUp || r == Role::kExpDown || r == Role::kExpGateUp;
}

bool IsSmall(const PlannedTensor& p) {
  switch (p.values) {
    case Values::kMatrix: case Values::kOutMatrix: case Values::kEmbedding: case Values::kF32Matrix: return false;
    default: return true;
  }
}

bool IsZeroCentredNorm(const PlannedTensor& p, Arch arch) { return p.values == Values::kNorm && IsHybrid(arch); }

const char* GgufArchName(Arch a) {
  switch (a) {
    case Arch::kQwen3_5: return "qwen35";
    case Arch::kQwen3: return "qwen3";
    case Arch::kQwen3_5Moe: return "qwen35moe";
    case Arch::kQwen3Next: return "qwen3next";
    case Arch::kKimiLinear: return "kimi-linear";
    case Arch::kGlmDsa: return "glm-dsa";
    case Arch::kDeepseek32: return "deepseek32";
    case Arch::kKdaDsa: return "kda-dsa";
    case Arch::kKimiK3: return "kimi-k3";
  }
  return "?";
}

}  // namespace lineage::model
