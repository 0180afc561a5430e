#include "model/tensor_plan.h"

namespace lineage::model {
namespace {

// Qwen3.5 and Kimi K3 are multimodal checkpoints whose text model sits
// under a prefix (K3's lm_head too).
std::string HfModelPrefix(const ModelConfig& c) {
  if (c.arch == Arch::kKimiK3) return "language_model.model.";
  return c.arch == Arch::kQwen3_5 || c.arch == Arch::kQwen3_5Moe ? "model.language_model." : "model.";
}

struct Planner {
  const ModelConfig& c;
  std::vector<PlannedTensor> out;

  std::string HfPrefix() const { return HfModelPrefix(c); }
  std::string HfLmHead() const { return c.arch == Arch::kKimiK3 ? "language_model.lm_head.weight" : "lm_head.weight"; }

  void Add(Role role, int64_t layer, const std::string& hf_suffix, std::vector<int64_t> hf_shape,
           const std::string& gguf_suffix, std::vector<int64_t> gguf_shape) {
    PlannedTensor t;
    t.role = role;
    t.layer = layer;
    std::string hf_layer = layer >= 0 ? "layers." + std::to_string(layer) + "." : "";
    std::string gguf_layer = layer >= 0 ? "blk." + std::to_string(layer) + "." : "";
    // Qwen keeps its MTP blocks apart, under mtp.layers.i (no model prefix).
    const bool qwen_mtp = layer >= c.num_layers && IsHybrid(c.arch);
    t.hf_name = role == Role::kLmHead ? HfLmHead()
                : qwen_mtp            ? "mtp.layers." + std::to_string(layer - c.num_layers) + "." + hf_suffix
                                      : HfPrefix() + hf_layer + hf_suffix;
    t.hf_shape = std::move(hf_shape);
    t.gguf_name = gguf_layer + gguf_suffix;
    t.gguf_shape = std::move(gguf_shape);
    out.push_back(std::move(t));
  }
  // A tensor of one layout only: both names and shapes are that layout's.
  void AddOwn(Role role, int64_t layer, int64_t expert, const std::string& suffix, std::vector<int64_t> shape) {
    Add(role, layer, suffix, shape, suffix, shape);
    out.back().expert = expert;
    if (c.format == FileFormat::kGguf) out.back().hf_name = out.back().gguf_name;
    else out.back().gguf_name = out.back().hf_name;
  }
  // Same shape in both layouts.
  void Add(Role role, int64_t layer, const std::string& hf_suffix, const std::string& gguf_suffix,
           std::vector<int64_t> shape) {
    Add(role, layer, hf_suffix, shape, gguf_suffix, shape);
  }
  // A vector the HF checkpoint stores as <hf_stem>_norm ⊙ <hf_stem>_proj.
  void AddFused(Role role, int64_t layer, const std::string& hf_stem, const std::string& gguf_suffix, int64_t n) {
    Add(role, layer, hf_stem + "_norm.weight", gguf_suffix, {n});
    const std::string& norm = out.back().hf_name;
    out.back().hf_factor_name = norm.substr(0, norm.size() - std::string("_norm.weight").size()) + "_proj.weight";
  }
};

// Each kind's tensors (layer_kinds.h). HF names follow the released
// checkpoints, GGUF names llama.cpp's converters.

// Kimi Delta Attention (spec §7.2, §7.5; K3 latent-attention §2.1).
void PlanKda(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t nh = c.lin_num_k_heads, d = c.lin_k_dim, inner = nh * d, K = c.conv_kernel;
  p.Add(Role::kKdaQ, l, "self_attn.q_proj.weight", "attn_q.weight", {inner, H});
  p.Add(Role::kKdaK, l, "self_attn.k_proj.weight", "attn_k.weight", {inner, H});
  p.Add(Role::kKdaV, l, "self_attn.v_proj.weight", "attn_v.weight", {inner, H});
  p.Add(Role::kKdaQConv, l, "self_attn.q_conv1d.weight", {inner, 1, K}, "ssm_conv1d_q.weight", {1, inner, 1, K});
  p.Add(Role::kKdaKConv, l, "self_attn.k_conv1d.weight", {inner, 1, K}, "ssm_conv1d_k.weight", {1, inner, 1, K});
  p.Add(Role::kKdaVConv, l, "self_attn.v_conv1d.weight", {inner, 1, K}, "ssm_conv1d_v.weight", {1, inner, 1, K});
  p.Add(Role::kKdaFA, l, "self_attn.f_a_proj.weight", "ssm_f_a.weight", {d, H});
  p.Add(Role::kKdaFB, l, "self_attn.f_b_proj.weight", "ssm_f_b.weight", {inner, d});
  p.Add(Role::kKdaB, l, "self_attn.b_proj.weight", "ssm_beta.weight", {nh, H});
  if (c.arch == Arch::kKimiK3) {  // 1-D in K3's files
    p.Add(Role::kKdaALog, l, "self_attn.A_log", {nh}, "ssm_a", {nh});
  } else {
    p.Add(Role::kKdaALog, l, "self_attn.A_log", {1, 1, nh, 1}, "ssm_a", {1, 1, nh, 1});
  }
  p.Add(Role::kKdaDtBias, l, "self_attn.dt_bias", "ssm_dt.bias", {inner});
  if (c.arch == Arch::kKimiK3) {
    p.Add(Role::kKdaGFull, l, "self_attn.g_proj.weight", "ssm_g.weight", {inner, H});
  } else {
    p.Add(Role::kKdaGA, l, "self_attn.g_a_proj.weight", "ssm_g_a.weight", {d, H});
    p.Add(Role::kKdaGB, l, "self_attn.g_b_proj.weight", "ssm_g_b.weight", {inner, d});
  }
  p.Add(Role::kKdaNorm, l, "self_attn.o_norm.weight", "ssm_norm.weight", {d});
  p.Add(Role::kKdaOut, l, "self_attn.o_proj.weight", "attn_output.weight", {H, inner});
}

// Latent attention, dense or sparse (spec §7.3; latent-attention §3.2, §3.4).
void PlanLatent(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t nh = c.num_heads, dn = c.qk_nope_dim, dv = c.v_head_dim, r = c.kv_lora_rank;
  if (c.q_lora_rank > 0) {
    const int64_t qr = c.q_lora_rank;
    p.Add(Role::kMlaQA, l, "self_attn.q_a_proj.weight", "attn_q_a.weight", {qr, H});
    p.Add(Role::kMlaQANorm, l, "self_attn.q_a_layernorm.weight", "attn_q_a_norm.weight", {qr});
    p.Add(Role::kMlaQB, l, "self_attn.q_b_proj.weight", "attn_q_b.weight", {nh * c.head_dim, qr});
  } else {
    p.Add(Role::kMlaQ, l, "self_attn.q_proj.weight", "attn_q.weight", {nh * c.head_dim, H});
  }
  p.Add(Role::kMlaKvA, l, "self_attn.kv_a_proj_with_mqa.weight", "attn_kv_a_mqa.weight", {c.latent_dim(), H});
  p.Add(Role::kMlaKvANorm, l, "self_attn.kv_a_layernorm.weight", "attn_kv_a_norm.weight", {r});
  if (c.format == FileFormat::kSafetensors) {
    p.Add(Role::kMlaKvB, l, "self_attn.kv_b_proj.weight", "-", {nh * (dn + dv), r});
  } else {  // split from kv_b_proj, k transposed per head (spec §7.3)
    p.Add(Role::kMlaKB, l, "self_attn.kv_b_proj.weight", {nh * (dn + dv), r}, "attn_k_b.weight", {nh, r, dn});
    p.Add(Role::kMlaVB, l, "self_attn.kv_b_proj.weight", {nh * (dn + dv), r}, "attn_v_b.weight", {nh, dv, r});
  }
  if (c.arch == Arch::kKimiK3) p.Add(Role::kMlaGate, l, "self_attn.g_proj.weight", "attn_gate.weight", {nh * dv, H});
  p.Add(Role::kMlaOut, l, "self_attn.o_proj.weight", "attn_output.weight", {H, nh * dv});
  if (c.indexer_layer(l)) {  // HF names as GLM-5's and DeepSeek-V3.2's checkpoints
    const int64_t Hi = c.indexer_heads, D = c.indexer_dim;
    p.Add(Role::kIdxQB, l, "self_attn.indexer.wq_b.weight", "indexer.attn_q_b.weight", {Hi * D, c.q_lora_rank});
    p.Add(Role::kIdxK, l, "self_attn.indexer.wk.weight", "indexer.attn_k.weight", {D, H});
    p.Add(Role::kIdxKNorm, l, "self_attn.indexer.k_norm.weight", "indexer.k_norm.weight", {D});
    p.Add(Role::kIdxKNormBias, l, "self_attn.indexer.k_norm.bias", "indexer.k_norm.bias", {D});
    p.Add(Role::kIdxProj, l, "self_attn.indexer.weights_proj.weight", "indexer.proj.weight", {Hi, H});
  }
}

// The DeepSeek-V3 MoE (spec §7.4; latent-attention §1.7, K3's latent form
// §2.3) with its routed experts one 2-D tensor per expert (HF) or stacked
// (GGUF).
void PlanDeepseekMoe(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, E = c.num_experts, Ie = c.expert_intermediate;
  const int64_t Is = c.shared_intermediate;
  const int64_t X = c.expert_latent > 0 ? c.expert_latent : H;  // the routed experts' input width
  // Kimi's checkpoints name the MoE block_sparse_moe (experts w1 / w3 / w2);
  // DeepSeek's and GLM's name it mlp (experts gate_proj / up_proj / down_proj).
  const bool kimi_names = c.arch == Arch::kKimiLinear || c.arch == Arch::kKdaDsa || c.arch == Arch::kKimiK3;
  const std::string m = kimi_names ? "block_sparse_moe." : "mlp.";
  p.Add(Role::kRouter, l, m + "gate.weight", "ffn_gate_inp.weight", {E, H});
  p.Add(Role::kRouterBias, l, m + "gate.e_score_correction_bias", "exp_probs_b.bias", {E});
  if (c.expert_latent > 0) {  // K3: the experts run in a latent of X
    p.Add(Role::kMoeLatentDown, l, m + "routed_expert_down_proj.weight", "ffn_routed_down.weight", {X, H});
  }
  if (c.format == FileFormat::kGguf) {
    p.AddOwn(Role::kExpGate, l, -1, "ffn_gate_exps.weight", {E, Ie, X});
    p.AddOwn(Role::kExpUp, l, -1, "ffn_up_exps.weight", {E, Ie, X});
    p.AddOwn(Role::kExpDown, l, -1, "ffn_down_exps.weight", {E, X, Ie});
  } else {
    for (int64_t e = 0; e < E; ++e) {
      const std::string x = m + "experts." + std::to_string(e) + ".";
      p.AddOwn(Role::kExpGate, l, e, x + (kimi_names ? "w1.weight" : "gate_proj.weight"), {Ie, X});
      p.AddOwn(Role::kExpUp, l, e, x + (kimi_names ? "w3.weight" : "up_proj.weight"), {Ie, X});
      p.AddOwn(Role::kExpDown, l, e, x + (kimi_names ? "w2.weight" : "down_proj.weight"), {X, Ie});
    }
  }
  if (c.expert_latent > 0) {
    p.Add(Role::kMoeLatentNorm, l, m + "routed_expert_norm.weight", "ffn_routed_norm.weight", {X});
    p.Add(Role::kMoeLatentUp, l, m + "routed_expert_up_proj.weight", "ffn_routed_up.weight", {H, X});
  }
  p.Add(Role::kShGate, l, m + "shared_experts.gate_proj.weight", "ffn_gate_shexp.weight", {Is, H});
  p.Add(Role::kShUp, l, m + "shared_experts.up_proj.weight", "ffn_up_shexp.weight", {Is, H});
  p.Add(Role::kShDown, l, m + "shared_experts.down_proj.weight", "ffn_down_shexp.weight", {H, Is});
}

// Gated DeltaNet (spec §2.1, §5.2): separate input projections, or
// Qwen3-Next's fused ones.
void PlanGdn(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t key_dim = c.lin_num_k_heads * c.lin_k_dim;
  const int64_t value_dim = c.lin_num_v_heads * c.lin_v_dim;
  const int64_t conv_dim = 2 * key_dim + value_dim;
  const int64_t Hv = c.lin_num_v_heads, K = c.conv_kernel;
  if (c.arch != Arch::kQwen3Next) {
    p.Add(Role::kLinQkv, l, "linear_attn.in_proj_qkv.weight", "attn_qkv.weight", {conv_dim, H});
    p.Add(Role::kLinZ, l, "linear_attn.in_proj_z.weight", "attn_gate.weight", {value_dim, H});
    p.Add(Role::kLinB, l, "linear_attn.in_proj_b.weight", "ssm_beta.weight", {Hv, H});
    p.Add(Role::kLinA, l, "linear_attn.in_proj_a.weight", "ssm_alpha.weight", {Hv, H});
  } else if (c.format == FileFormat::kSafetensors) {
    p.Add(Role::kLinQkvz, l, "linear_attn.in_proj_qkvz.weight", "-", {conv_dim + value_dim, H});
    p.Add(Role::kLinBa, l, "linear_attn.in_proj_ba.weight", "ssm_ba.weight", {2 * Hv, H});
  } else {
    // The converter un-interleaves qkvz into attn_qkv and attn_gate (both
    // cut from the HF in_proj_qkvz) and keeps ba grouped (spec §5.2).
    p.Add(Role::kLinQkv, l, "linear_attn.in_proj_qkvz.weight", {conv_dim, H}, "attn_qkv.weight", {conv_dim, H});
    p.Add(Role::kLinZ, l, "linear_attn.in_proj_qkvz.weight", {value_dim, H}, "attn_gate.weight", {value_dim, H});
    p.Add(Role::kLinBa, l, "linear_attn.in_proj_ba.weight", "ssm_ba.weight", {2 * Hv, H});
  }
  p.Add(Role::kLinConv, l, "linear_attn.conv1d.weight", {conv_dim, 1, K}, "ssm_conv1d.weight", {conv_dim, K});
  p.Add(Role::kLinDtBias, l, "linear_attn.dt_bias", "ssm_dt.bias", {Hv});
  p.Add(Role::kLinALog, l, "linear_attn.A_log", "ssm_a", {Hv});
  p.Add(Role::kLinNorm, l, "linear_attn.norm.weight", "ssm_norm.weight", {c.lin_v_dim});
  p.Add(Role::kLinOut, l, "linear_attn.out_proj.weight", "ssm_out.weight", {H, value_dim});
}

// Softmax attention (spec §3, §11), q with Qwen3.5's interleaved output gate.
void PlanAttention(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, hd = c.head_dim;
  const int64_t q_rows = (c.attn_output_gate ? 2 : 1) * c.num_heads * hd;
  p.Add(Role::kAttnQ, l, "self_attn.q_proj.weight", "attn_q.weight", {q_rows, H});
  p.Add(Role::kAttnK, l, "self_attn.k_proj.weight", "attn_k.weight", {c.num_kv_heads * hd, H});
  p.Add(Role::kAttnV, l, "self_attn.v_proj.weight", "attn_v.weight", {c.num_kv_heads * hd, H});
  p.Add(Role::kAttnO, l, "self_attn.o_proj.weight", "attn_output.weight", {H, c.num_heads * hd});
  p.Add(Role::kAttnQNorm, l, "self_attn.q_norm.weight", "attn_q_norm.weight", {hd});
  p.Add(Role::kAttnKNorm, l, "self_attn.k_norm.weight", "attn_k_norm.weight", {hd});
}

// The dense SwiGLU feed-forward.
void PlanDense(Planner& p, int64_t l) {
  const int64_t H = p.c.hidden, I = p.c.intermediate;
  p.Add(Role::kFfnGate, l, "mlp.gate_proj.weight", "ffn_gate.weight", {I, H});
  p.Add(Role::kFfnUp, l, "mlp.up_proj.weight", "ffn_up.weight", {I, H});
  p.Add(Role::kFfnDown, l, "mlp.down_proj.weight", "ffn_down.weight", {H, I});
}

// The Qwen MoE (spec §4.3): the router, the routed experts in the file's
// layout, the shared expert and its gate.
void PlanMoe(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, E = c.num_experts, Is = c.shared_intermediate;
  p.Add(Role::kRouter, l, "mlp.gate.weight", "ffn_gate_inp.weight", {E, H});
  for (PlannedTensor& t : PlanExperts(c, l, DefaultExpertLayout(c), c.format)) p.out.push_back(std::move(t));
  p.Add(Role::kShGate, l, "mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight", {Is, H});
  p.Add(Role::kShUp, l, "mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight", {Is, H});
  p.Add(Role::kShDown, l, "mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight", {H, Is});
  p.Add(Role::kShGateInp, l, "mlp.shared_expert_gate.weight", {1, H}, "ffn_gate_inp_shexp.weight", {H});
}

// One layer's tensors: its norms, mixer and feed-forward by kind.
void PlanLayer(Planner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  p.Add(Role::kInputNorm, l, "input_layernorm.weight", "attn_norm.weight", {H});
  if (c.attn_res_block > 0) {
    p.AddFused(Role::kAttnResScore, l, "self_attention_res", "attn_res_score.weight", H);
    p.AddFused(Role::kFfnResScore, l, "mlp_res", "ffn_res_score.weight", H);
  }
  switch (c.mixer(l)) {
    case MixerKind::kGatedDeltaNet: PlanGdn(p, l); break;
    case MixerKind::kKimiDelta: PlanKda(p, l); break;
    case MixerKind::kAttention: PlanAttention(p, l); break;
    case MixerKind::kLatent: case MixerKind::kSparseLatent: PlanLatent(p, l); break;
  }
  // llama.cpp maps post_attention_layernorm to ATTN_POST_NORM for qwen35 and
  // to FFN_NORM for the others (spec §5.2, §11).
  p.Add(Role::kPostNorm, l, "post_attention_layernorm.weight",
        IsHybrid(c.arch) ? "post_attention_norm.weight" : "ffn_norm.weight", {H});
  switch (c.ffn(l)) {
    case FfnKind::kDense: PlanDense(p, l); break;
    case FfnKind::kMoe: PlanMoe(p, l); break;
    case FfnKind::kDeepseekMoe: PlanDeepseekMoe(p, l); break;
  }
}

// The first MTP block (spec hybrid-qwen §5.2, latent-attention §1.9).
void PlanMtp(Planner& p) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, l = c.num_layers;
  PlanLayer(p, l);
  const bool qwen = IsHybrid(c.arch);
  auto add = [&](Role role, const std::string& qwen_hf, const std::string& hf, const std::string& gguf,
                 std::vector<int64_t> shape) {
    p.Add(role, l, hf, "nextn." + gguf, std::move(shape));
    if (qwen) p.out.back().hf_name = "mtp." + qwen_hf;
  };
  add(Role::kMtpEhProj, "fc.weight", "eh_proj.weight", "eh_proj.weight", {H, 2 * H});
  add(Role::kMtpENorm, "pre_fc_norm_embedding.weight", "enorm.weight", "enorm.weight", {H});
  add(Role::kMtpHNorm, "pre_fc_norm_hidden.weight", "hnorm.weight", "hnorm.weight", {H});
  add(Role::kMtpHeadNorm, "norm.weight", "shared_head.norm.weight", "shared_head_norm.weight", {H});
}

}  // namespace

std::vector<PlannedTensor> PlanTensors(const ModelConfig& c) {
  Planner p{c, {}};
  const int64_t H = c.hidden, V = c.vocab;
  p.Add(Role::kEmbed, -1, "embed_tokens.weight", "token_embd.weight", {V, H});
  for (int64_t l = 0; l < c.num_layers; ++l) PlanLayer(p, l);
  p.Add(Role::kFinalNorm, -1, "norm.weight", "output_norm.weight", {H});
  if (c.attn_res_block > 0) p.AddFused(Role::kOutputResScore, -1, "output_attn_res", "output_res_score.weight", H);
  if (!c.tied_embeddings) p.Add(Role::kLmHead, -1, "lm_head.weight", "output.weight", {V, H});
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
  Planner p{c, {}};
  const int64_t E = c.num_experts, I = c.expert_intermediate, H = c.hidden;
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

bool IsSmallRole(Role r) {
  switch (r) {
    case Role::kShGateInp:
    case Role::kFinalNorm: case Role::kInputNorm: case Role::kPostNorm:
    case Role::kLinConv: case Role::kLinDtBias: case Role::kLinALog: case Role::kLinNorm:
    case Role::kAttnQNorm: case Role::kAttnKNorm:
    case Role::kKdaQConv: case Role::kKdaKConv: case Role::kKdaVConv: case Role::kKdaALog: case Role::kKdaDtBias:
    case Role::kKdaNorm: case Role::kMlaKvANorm: case Role::kRouterBias:
    case Role::kMlaQANorm: case Role::kIdxKNorm: case Role::kIdxKNormBias:
    case Role::kMoeLatentNorm: case Role::kAttnResScore: case Role::kFfnResScore: case Role::kOutputResScore:
    case Role::kMtpENorm: case Role::kMtpHNorm: case Role::kMtpHeadNorm:
      return true;
    default:
      return false;
  }
}

bool IsZeroCentredNorm(Role r, Arch arch) {
  if (!IsHybrid(arch)) return false;
  switch (r) {
    case Role::kFinalNorm: case Role::kInputNorm: case Role::kPostNorm:
    case Role::kAttnQNorm: case Role::kAttnKNorm:
    case Role::kMtpENorm: case Role::kMtpHNorm: case Role::kMtpHeadNorm:
      return true;
    default:
      return false;
  }
}

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
