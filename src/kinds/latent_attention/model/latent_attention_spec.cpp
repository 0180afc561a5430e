// Latent attention's tensors and sizes (layer_kinds.h).
#include "kinds/latent_attention/latent_tensors.h"

#include "core/tensor_slice.h"
#include "model/layer_kinds.h"

namespace lineage::kinds::latent_attention {
namespace {

using namespace model;

// MLA's per-head k_b_t [L, dn] and v_b [dv, L] (weights.h) from HF kv_b_proj
// [nh (dn + dv), L]: v_b are row slices; W_k,h is transposed into an owned
// fp32 buffer.
void BindKvB(const ModelConfig& c, const TensorView& kv_b, MlaWeights* w) {
  const int64_t nh = c.num_heads, dn = c.mla.qk_nope_dim, dv = c.mla.v_head_dim, L = c.mla.kv_lora_rank;
  auto owned = std::make_shared<std::vector<float>>(static_cast<size_t>(nh * L * dn));
  std::vector<float> row(static_cast<size_t>(L));
  w->k_b_t.clear();
  w->v_b.clear();
  for (int64_t h = 0; h < nh; ++h) {
    float* kt = owned->data() + h * L * dn;
    for (int64_t j = 0; j < dn; ++j) {
      DecodeToFloat(kv_b, (h * (dn + dv) + j) * L, L, row.data());
      for (int64_t l = 0; l < L; ++l) kt[l * dn + j] = row[l];
    }
    TensorView t;
    t.name = kv_b.name + "[k head " + std::to_string(h) + "]^T";
    t.dtype = DType::kF32;
    t.shape = {L, dn};
    t.data = kt;
    t.nbytes = L * dn * 4;
    w->k_b_t.push_back(t);
    w->v_b.push_back(RowSlice(kv_b, h * (dn + dv) + dn, dv, "[v head " + std::to_string(h) + "]"));
  }
  w->owned = std::move(owned);
}

// The latent row [c_kv | k_pe].
int64_t KvFloats(const ModelConfig& c, int64_t) { return c.mla.latent_dim(); }

}  // namespace

// Latent attention (spec §7.3; latent-attention §3.2, §3.4): the query
// (direct or through its LoRA), the latent down-projection with k_pe, kv_b
// whole (HF) or cut per head (GGUF), K3's output gate, the output.
void PlanLatentTensors(TensorPlanner& p, int64_t l) {
  const ModelConfig& c = p.c;
  const int64_t H = c.hidden;
  const int64_t nh = c.num_heads, dn = c.mla.qk_nope_dim, dv = c.mla.v_head_dim, r = c.mla.kv_lora_rank;
  if (c.mla.q_lora_rank > 0) {
    const int64_t qr = c.mla.q_lora_rank;
    p.Add(kMlaQA, l, "self_attn.q_a_proj.weight", "attn_q_a.weight", {qr, H});
    p.Add(kMlaQANorm, l, "self_attn.q_a_layernorm.weight", "attn_q_a_norm.weight", {qr}, Values::kPlainNorm);
    p.Add(kMlaQB, l, "self_attn.q_b_proj.weight", "attn_q_b.weight", {nh * c.head_dim, qr});
  } else {
    p.Add(kMlaQ, l, "self_attn.q_proj.weight", "attn_q.weight", {nh * c.head_dim, H});
  }
  p.Add(kMlaKvA, l, "self_attn.kv_a_proj_with_mqa.weight", "attn_kv_a_mqa.weight", {c.mla.latent_dim(), H});
  p.Add(kMlaKvANorm, l, "self_attn.kv_a_layernorm.weight", "attn_kv_a_norm.weight", {r}, Values::kPlainNorm);
  if (c.format == FileFormat::kSafetensors) {
    p.Add(kMlaKvB, l, "self_attn.kv_b_proj.weight", "-", {nh * (dn + dv), r});
  } else {  // split from kv_b_proj, k transposed per head (spec §7.3)
    p.Add(kMlaKB, l, "self_attn.kv_b_proj.weight", {nh * (dn + dv), r}, "attn_k_b.weight", {nh, r, dn});
    p.Add(kMlaVB, l, "self_attn.kv_b_proj.weight", {nh * (dn + dv), r}, "attn_v_b.weight", {nh, dv, r});
  }
  if (c.arch == Arch::kKimiK3) p.Add(kMlaGate, l, "self_attn.g_proj.weight", "attn_gate.weight", {nh * dv, H});
  p.Add(kMlaOut, l, "self_attn.o_proj.weight", "attn_output.weight", {H, nh * dv}, Values::kOutMatrix);
}

bool BindLatentTensor(const BoundTensor& t, LayerWeights& w) {
  const ModelConfig& c = t.c;
  MlaWeights& m = w.mla;
  const TensorView& v = t.view;
  switch (t.plan.role) {
    case kMlaQ: m.q_proj = v; return true;
    case kMlaQA: m.q_a = v; return true;
    case kMlaQANorm: m.q_a_norm = std::move(t.small); return true;
    case kMlaQB: m.q_b = v; return true;
    case kMlaKvA: m.kv_a = v; return true;
    case kMlaKvANorm: m.kv_a_norm = std::move(t.small); return true;
    case kMlaKvB: BindKvB(c, v, &m); return true;
    case kMlaKB:
      for (int64_t h = 0; h < c.num_heads; ++h)
        m.k_b_t.push_back(RowSlice(v, h * c.mla.kv_lora_rank, c.mla.kv_lora_rank, "[head " + std::to_string(h) + "]"));
      return true;
    case kMlaVB:
      for (int64_t h = 0; h < c.num_heads; ++h)
        m.v_b.push_back(RowSlice(v, h * c.mla.v_head_dim, c.mla.v_head_dim, "[head " + std::to_string(h) + "]"));
      return true;
    case kMlaGate: m.out_gate = v; return true;
    case kMlaOut: m.o_proj = v; return true;
    default: return false;
  }
}

extern const KindConfig kConfig;  // its hyperparameters (latent_attention_config.cpp)

extern const MixerKindInfo kModelSpec{"latent-attention", false, KvFloats, NoState,
                                      {PlanLatentTensors, BindLatentTensor, nullptr}, &kConfig};

}  // namespace lineage::kinds::latent_attention
