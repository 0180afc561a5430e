// Softmax attention's tensors and sizes (layer_kinds.h).
#include "core/tensor_slice.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
#include "model/tensor_planner.h"
#include "model/weights.h"

namespace lineage::kinds::attention {
namespace {

using namespace model;

// This kind's roles (layer_kinds.h).
constexpr Role kAttnQ = MixerRole(MixerKind::kAttention, 0);
constexpr Role kAttnK = MixerRole(MixerKind::kAttention, 1);
constexpr Role kAttnV = MixerRole(MixerKind::kAttention, 2);
constexpr Role kAttnO = MixerRole(MixerKind::kAttention, 3);
constexpr Role kAttnQNorm = MixerRole(MixerKind::kAttention, 4);
constexpr Role kAttnKNorm = MixerRole(MixerKind::kAttention, 5);

// Softmax attention (spec §3, §11), q with Qwen3.5's interleaved output gate.
void PlanAttention(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden, hd = c.head_dim;
  const int64_t q_rows = (c.attn_output_gate ? 2 : 1) * c.num_heads * hd;
  p.Add(kAttnQ, l, "self_attn.q_proj.weight", "attn_q.weight", {q_rows, H});
  p.Add(kAttnK, l, "self_attn.k_proj.weight", "attn_k.weight", {c.num_kv_heads * hd, H});
  p.Add(kAttnV, l, "self_attn.v_proj.weight", "attn_v.weight", {c.num_kv_heads * hd, H});
  p.Add(kAttnO, l, "self_attn.o_proj.weight", "attn_output.weight", {H, c.num_heads * hd});
  p.Add(kAttnQNorm, l, "self_attn.q_norm.weight", "attn_q_norm.weight", {hd}, Values::kNorm);
  p.Add(kAttnKNorm, l, "self_attn.k_norm.weight", "attn_k_norm.weight", {hd}, Values::kNorm);
}

bool Bind(const BoundTensor& t, LayerWeights& w) {
  FullAttentionWeights& a = w.full;
  switch (t.plan.role) {
    case kAttnQ: a.q_proj = t.view; return true;
    case kAttnK: a.k_proj = t.view; return true;
    case kAttnV: a.v_proj = t.view; return true;
    case kAttnO: a.o_proj = t.view; return true;
    case kAttnQNorm: a.q_norm = std::move(t.small); return true;
    case kAttnKNorm: a.k_norm = std::move(t.small); return true;
    default: return false;
  }
}

// K and V of every kv head.
int64_t KvFloats(const ModelConfig& c, int64_t) { return 2 * c.num_kv_heads * c.head_dim; }


}  // namespace

extern const model::MixerKindInfo kModelSpec{"attention", false, KvFloats, NoState, {PlanAttention, Bind, nullptr}};

}  // namespace lineage::kinds::attention
