#include "model/tensor_plan.h"

namespace lineage::model {
namespace {

struct Planner {
  const ModelConfig& c;
  std::vector<PlannedTensor> out;

  std::string HfPrefix() const {
    return c.arch == Arch::kQwen3_5 ? "model.language_model." : "model.";
  }

  void Add(Role role, int64_t layer, const std::string& hf_suffix, std::vector<int64_t> hf_shape,
           const std::string& gguf_suffix, std::vector<int64_t> gguf_shape) {
    PlannedTensor t;
    t.role = role;
    t.layer = layer;
    std::string hf_layer = layer >= 0 ? "layers." + std::to_string(layer) + "." : "";
    std::string gguf_layer = layer >= 0 ? "blk." + std::to_string(layer) + "." : "";
    t.hf_name = role == Role::kLmHead ? hf_suffix : HfPrefix() + hf_layer + hf_suffix;
    t.hf_shape = std::move(hf_shape);
    t.gguf_name = gguf_layer + gguf_suffix;
    t.gguf_shape = std::move(gguf_shape);
    out.push_back(std::move(t));
  }
  // Same shape in both layouts.
  void Add(Role role, int64_t layer, const std::string& hf_suffix, const std::string& gguf_suffix,
           std::vector<int64_t> shape) {
    Add(role, layer, hf_suffix, shape, gguf_suffix, shape);
  }
};

}  // namespace

std::vector<PlannedTensor> PlanTensors(const ModelConfig& c) {
  Planner p{c, {}};
  const int64_t H = c.hidden, I = c.intermediate, V = c.vocab;
  const int64_t hd = c.head_dim;
  const bool qwen35 = c.arch == Arch::kQwen3_5;
  p.Add(Role::kEmbed, -1, "embed_tokens.weight", "token_embd.weight", {V, H});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    p.Add(Role::kInputNorm, l, "input_layernorm.weight", "attn_norm.weight", {H});
    if (c.layer_kinds[l] == LayerKind::kLinearAttention) {
      const int64_t key_dim = c.lin_num_k_heads * c.lin_k_dim;
      const int64_t value_dim = c.lin_num_v_heads * c.lin_v_dim;
      const int64_t conv_dim = 2 * key_dim + value_dim;
      const int64_t Hv = c.lin_num_v_heads, K = c.conv_kernel;
      p.Add(Role::kLinQkv, l, "linear_attn.in_proj_qkv.weight", "attn_qkv.weight", {conv_dim, H});
      p.Add(Role::kLinZ, l, "linear_attn.in_proj_z.weight", "attn_gate.weight", {value_dim, H});
      p.Add(Role::kLinB, l, "linear_attn.in_proj_b.weight", "ssm_beta.weight", {Hv, H});
      p.Add(Role::kLinA, l, "linear_attn.in_proj_a.weight", "ssm_alpha.weight", {Hv, H});
      p.Add(Role::kLinConv, l, "linear_attn.conv1d.weight", {conv_dim, 1, K}, "ssm_conv1d.weight",
            {conv_dim, K});
      p.Add(Role::kLinDtBias, l, "linear_attn.dt_bias", "ssm_dt.bias", {Hv});
      p.Add(Role::kLinALog, l, "linear_attn.A_log", "ssm_a", {Hv});
      p.Add(Role::kLinNorm, l, "linear_attn.norm.weight", "ssm_norm.weight", {c.lin_v_dim});
      p.Add(Role::kLinOut, l, "linear_attn.out_proj.weight", "ssm_out.weight", {H, value_dim});
    } else {
      const int64_t q_rows = (c.attn_output_gate ? 2 : 1) * c.num_heads * hd;
      p.Add(Role::kAttnQ, l, "self_attn.q_proj.weight", "attn_q.weight", {q_rows, H});
      p.Add(Role::kAttnK, l, "self_attn.k_proj.weight", "attn_k.weight", {c.num_kv_heads * hd, H});
      p.Add(Role::kAttnV, l, "self_attn.v_proj.weight", "attn_v.weight", {c.num_kv_heads * hd, H});
      p.Add(Role::kAttnO, l, "self_attn.o_proj.weight", "attn_output.weight", {H, c.num_heads * hd});
      p.Add(Role::kAttnQNorm, l, "self_attn.q_norm.weight", "attn_q_norm.weight", {hd});
      p.Add(Role::kAttnKNorm, l, "self_attn.k_norm.weight", "attn_k_norm.weight", {hd});
    }
    // llama.cpp maps post_attention_layernorm to ATTN_POST_NORM for qwen35 and
    // to FFN_NORM for qwen3 (spec §5.2, §11).
    p.Add(Role::kPostNorm, l, "post_attention_layernorm.weight",
          qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight", {H});
    p.Add(Role::kFfnGate, l, "mlp.gate_proj.weight", "ffn_gate.weight", {I, H});
    p.Add(Role::kFfnUp, l, "mlp.up_proj.weight", "ffn_up.weight", {I, H});
    p.Add(Role::kFfnDown, l, "mlp.down_proj.weight", "ffn_down.weight", {H, I});
  }
  p.Add(Role::kFinalNorm, -1, "norm.weight", "output_norm.weight", {H});
  if (!c.tied_embeddings) p.Add(Role::kLmHead, -1, "lm_head.weight", "output.weight", {V, H});
  return std::move(p.out);
}

bool IsSmallRole(Role r) {
  switch (r) {
    case Role::kFinalNorm: case Role::kInputNorm: case Role::kPostNorm:
    case Role::kLinConv: case Role::kLinDtBias: case Role::kLinALog: case Role::kLinNorm:
    case Role::kAttnQNorm: case Role::kAttnKNorm:
      return true;
    default:
      return false;
  }
}

bool IsZeroCentredNorm(Role r, Arch arch) {
  if (arch != Arch::kQwen3_5) return false;
  switch (r) {
    case Role::kFinalNorm: case Role::kInputNorm: case Role::kPostNorm:
    case Role::kAttnQNorm: case Role::kAttnKNorm:
      return true;
    default:
      return false;
  }
}

const char* GgufArchName(Arch a) { return a == Arch::kQwen3_5 ? "qwen35" : "qwen3"; }

}  // namespace lineage::model
