// Softmax attention's tensors and sizes (layer_kinds.h).
#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::attention {
namespace {

using namespace model;

// Softmax attention (spec §3, §11), q with Qwen3.5's interleaved output gate.
void PlanAttention(TensorPlanner& p, int64_t l) {
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

bool Bind(const BoundTensor& t, LayerWeights& w) {
  FullAttentionWeights& a = w.full;
  switch (t.plan.role) {
    case Role::kAttnQ: a.q_proj = t.view; return true;
    case Role::kAttnK: a.k_proj = t.view; return true;
    case Role::kAttnV: a.v_proj = t.view; return true;
    case Role::kAttnO: a.o_proj = t.view; return true;
    case Role::kAttnQNorm: a.q_norm = std::move(t.small); return true;
    case Role::kAttnKNorm: a.k_norm = std::move(t.small); return true;
    default: return false;
  }
}

// K and V of every kv head.
int64_t KvFloats(const ModelConfig& c, int64_t) { return 2 * c.num_kv_heads * c.head_dim; }


}  // namespace

extern const model::MixerKindInfo kModelSpec{"attention", false, KvFloats, NoState, {PlanAttention, Bind, nullptr}};

}  // namespace lineage::kinds::attention
