#include "model/bind_weights.h"

#include <algorithm>

#include "core/tensor_slice.h"
#include "model/encode.h"
#include "model/tensor_plan.h"

namespace lineage::model {
namespace {

std::string ShapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::vector<int64_t> Squeezed(const std::vector<int64_t>& s) {
  std::vector<int64_t> out;
  for (int64_t d : s)
    if (d != 1) out.push_back(d);
  return out;
}

// Vectors may carry size-1 dimensions (GGUF ssm_a, HF conv [C, 1, K]);
// matrices must match exactly.
bool ShapeMatches(Role role, const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  if (IsSmallRole(role)) return Squeezed(got) == Squeezed(want);
  return got == want;
}

Result<TensorView> Fetch(const ModelConfig& c, const PlannedTensor& p, const TensorLookup& lookup) {
  const bool hf = c.format == FileFormat::kSafetensors;
  const std::string& name = hf ? p.hf_name : p.gguf_name;
  const std::vector<int64_t>& want = hf ? p.hf_shape : p.gguf_shape;
  LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(name));
  if (!ShapeMatches(p.role, f.view.shape, want))
    return InvalidArgument(f.file + ": tensor '" + name + "' has shape " + ShapeString(f.view.shape) +
                           ", expected " + ShapeString(want));
  // Every DType has kernels (core/kernels.h); a file's unknown GGML type
  // ids were refused by the lookup, naming the tensor and the type.
  if (f.view.cols() % Info(f.view.dtype).block_elements != 0)
    return InvalidArgument(f.file + ": tensor '" + name + "' rows of " + std::to_string(f.view.cols()) +
                           " are not whole " + std::string(Info(f.view.dtype).name) + " blocks");
  return f.view;
}

std::vector<float> SmallVector(const ModelConfig& c, const PlannedTensor& p, const TensorView& v) {
  std::vector<float> x = DecodeAll(v);
  if (c.format != FileFormat::kSafetensors) return x;
  if (IsZeroCentredNorm(p.role, c.arch))
    for (float& w : x) w = 1.0f + w;
  if (p.role == Role::kLinALog || p.role == Role::kKdaALog)
    for (float& a : x) a = SsmAFromALog(a);
  return x;
}

// A vector the HF checkpoint stores as two factors (PlannedTensor::
// hf_factor_name): x times the second, as the GGUF converter fuses them.
Status MultiplyHfFactor(const ModelConfig& c, const PlannedTensor& p, const TensorLookup& lookup,
                        std::vector<float>* x) {
  if (c.format != FileFormat::kSafetensors || p.hf_factor_name.empty()) return Status::Ok();
  LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(p.hf_factor_name));
  if (!ShapeMatches(p.role, f.view.shape, p.hf_shape))
    return InvalidArgument(f.file + ": tensor '" + p.hf_factor_name + "' has shape " + ShapeString(f.view.shape) +
                           ", expected " + ShapeString(p.hf_shape) + " (that of '" + p.hf_name + "')");
  const std::vector<float> factor = DecodeAll(f.view);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] *= factor[i];
  return Status::Ok();
}

// The error for a tensor sized for another number of experts than the
// config declares (expert_count / num_experts).
Status ExpertCountError(const FoundTensor& f, const std::string& name, int64_t declared) {
  return InvalidArgument(f.file + ": tensor '" + name + "' holds " + std::to_string(f.view.shape[0]) +
                         " experts but the model declares " + std::to_string(declared) + " (expert count)");
}

std::string ExpertSuffix(int64_t e) { return "[expert " + std::to_string(e) + "]"; }

// The routed experts of MoE layer `l`, from whichever layout the file has
// (tensor_plan.h). The expert count and widths come from the config; a
// tensor holding another number of experts is an error naming both.
Status BindExperts(const ModelConfig& c, int64_t l, const TensorLookup& lookup, MoeWeights* moe) {
  const int64_t E = c.num_experts, I = c.expert_intermediate;
  std::string first_missing;
  for (ExpertLayout layout : {DefaultExpertLayout(c), ExpertLayout::kStacked, ExpertLayout::kMergedGateUp,
                              ExpertLayout::kPerExpert}) {
    const std::vector<PlannedTensor> plan = PlanExperts(c, l, layout, c.format);
    if (plan.empty()) continue;
    auto probe = lookup(plan.front().gguf_name);
    if (!probe.ok()) {
      if (first_missing.empty()) first_missing = probe.status().message();
      continue;
    }
    moe->gate.assign(static_cast<size_t>(E), {});
    moe->up.assign(static_cast<size_t>(E), {});
    moe->down.assign(static_cast<size_t>(E), {});
    for (const PlannedTensor& p : plan) {
      LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(p.gguf_name));
      if (p.expert < 0 && f.view.shape.size() == 3 && f.view.shape[0] != E && f.view.shape[1] == p.gguf_shape[1] &&
          f.view.shape[2] == p.gguf_shape[2])
        return ExpertCountError(f, p.gguf_name, E);
      LINEAGE_ASSIGN_OR_RETURN(TensorView v, Fetch(c, p, lookup));
      const int64_t rows = p.gguf_shape[p.gguf_shape.size() - 2];
      for (int64_t e = 0; e < E; ++e) {
        if (p.expert >= 0 && p.expert != e) continue;
        const int64_t base = p.expert >= 0 ? 0 : e * rows;
        switch (p.role) {
          case Role::kExpGate: moe->gate[e] = RowSlice(v, base, rows, p.expert >= 0 ? "" : ExpertSuffix(e)); break;
          case Role::kExpUp: moe->up[e] = RowSlice(v, base, rows, p.expert >= 0 ? "" : ExpertSuffix(e)); break;
          case Role::kExpDown: moe->down[e] = RowSlice(v, base, rows, p.expert >= 0 ? "" : ExpertSuffix(e)); break;
          case Role::kExpGateUp:  // gate is the first half of each expert's rows, up the second
            moe->gate[e] = RowSlice(v, base, I, ExpertSuffix(e) + "[gate]");
            moe->up[e] = RowSlice(v, base + I, I, ExpertSuffix(e) + "[up]");
            break;
          default: break;
        }
      }
    }
    return Status::Ok();
  }
  return NotFound(first_missing + " (no routed-expert tensors of MoE layer " + std::to_string(l) + " in any layout)");
}

// A kimi routed-expert tensor: one expert's matrix (HF) or all experts
// stacked (GGUF), sliced per expert into moe.
void BindKimiExpert(const ModelConfig& c, const PlannedTensor& p, const TensorView& v, MoeWeights* moe) {
  const int64_t E = c.num_experts;
  moe->gate.resize(static_cast<size_t>(E));
  moe->up.resize(static_cast<size_t>(E));
  moe->down.resize(static_cast<size_t>(E));
  std::vector<TensorView>& dst = p.role == Role::kExpGate ? moe->gate : p.role == Role::kExpUp ? moe->up : moe->down;
  if (p.expert >= 0) {
    dst[p.expert] = v;
    return;
  }
  const int64_t rows = p.gguf_shape[1];
  for (int64_t e = 0; e < E; ++e) dst[e] = RowSlice(v, e * rows, rows, ExpertSuffix(e));
}

// MLA's per-head k_b_t [L, dn] and v_b [dv, L] (weights.h) from HF kv_b_proj
// [nh (dn + dv), L]: v_b are row slices; W_k,h is transposed into an owned
// fp32 buffer.
void BindKvB(const ModelConfig& c, const TensorView& kv_b, MlaWeights* w) {
  const int64_t nh = c.num_heads, dn = c.qk_nope_dim, dv = c.v_head_dim, L = c.kv_lora_rank;
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

// Kimi's layer kinds come from metadata (head_count_kv array, or the
// linear_attn_config lists): a layer whose tensors are of the other kind is
// named as such, rather than as a missing tensor.
Status CheckKimiLayerKinds(const ModelConfig& c, const TensorLookup& lookup) {
  const bool hf = c.format == FileFormat::kSafetensors;
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string prefix = LayerPrefix(c, l);
    const std::string kda = prefix + (hf ? "self_attn.f_a_proj.weight" : "ssm_f_a.weight");
    const std::string mla = prefix + (hf ? "self_attn.kv_a_proj_with_mqa.weight" : "attn_kv_a_mqa.weight");
    const bool declared_mla = c.layer_kinds[l] == LayerKind::kFullAttention;
    if (lookup(declared_mla ? mla : kda).ok()) continue;
    auto other = lookup(declared_mla ? kda : mla);
    if (!other.ok()) continue;  // neither: the plan's own lookup names what is missing
    const char* said = declared_mla ? "latent attention (MLA)" : "KDA";
    const char* holds = declared_mla ? "KDA" : "latent attention (MLA)";
    return InvalidArgument(other->file + ": layer " + std::to_string(l) + " is " + said +
                           " by the file's layer kinds (" +
                           (hf ? "linear_attn_config" : "attention.head_count_kv") + ") but holds " + holds +
                           " tensors ('" + (declared_mla ? kda : mla) + "')");
  }
  return Status::Ok();
}

// Qwen3-Next's input projections as row blocks (weights.h): q, k, v and z
// of key group g sit at rows g * (2 d_k + 2 r d_v) of in_proj_qkvz, b and a
// at rows g * 2r of in_proj_ba (spec §2.1).
void BuildGdnBlocks(const ModelConfig& c, LinearAttentionWeights* w) {
  const int64_t Hk = c.lin_num_k_heads, dk = c.lin_k_dim, dv = c.lin_v_dim, r = c.lin_num_v_heads / Hk;
  const int64_t key_dim = Hk * dk;
  auto& b = w->in_blocks;
  if (w->in_proj_qkvz.valid()) {
    const int64_t group = 2 * dk + 2 * r * dv;
    for (int64_t g = 0; g < Hk; ++g) {
      const int64_t base = g * group;
      b.push_back({RowSlice(w->in_proj_qkvz, base, dk, ""), GdnInput::kQkv, g * dk});
      b.push_back({RowSlice(w->in_proj_qkvz, base + dk, dk, ""), GdnInput::kQkv, key_dim + g * dk});
      b.push_back({RowSlice(w->in_proj_qkvz, base + 2 * dk, r * dv, ""), GdnInput::kQkv, 2 * key_dim + g * r * dv});
      b.push_back({RowSlice(w->in_proj_qkvz, base + 2 * dk + r * dv, r * dv, ""), GdnInput::kZ, g * r * dv});
    }
  } else {
    b.push_back({w->in_proj_qkv, GdnInput::kQkv, 0});
    b.push_back({w->in_proj_z, GdnInput::kZ, 0});
  }
  if (w->in_proj_ba.valid()) {
    for (int64_t g = 0; g < Hk; ++g) {
      b.push_back({RowSlice(w->in_proj_ba, g * 2 * r, r, ""), GdnInput::kB, g * r});
      b.push_back({RowSlice(w->in_proj_ba, g * 2 * r + r, r, ""), GdnInput::kA, g * r});
    }
  } else {
    b.push_back({w->in_proj_b, GdnInput::kB, 0});
    b.push_back({w->in_proj_a, GdnInput::kA, 0});
  }
}

}  // namespace

Result<Weights> BindWeights(const ModelConfig& c, const TensorLookup& lookup) {
  if (c.num_linear_layers() > 0 && c.latent()) LINEAGE_RETURN_IF_ERROR(CheckKimiLayerKinds(c, lookup));
  Weights w;
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int64_t l = 0; l < c.num_layers; ++l) w.layers[l].kind = c.layer_kinds[l];
  for (const PlannedTensor& p : PlanTensors(c)) {
    if (IsExpertRole(p.role) && !c.latent()) continue;  // BindExperts, below
    const bool mtp = p.layer >= c.num_layers;  // the MTP block: a draft head, not needed to run the model
    if (mtp && !w.mtp_unavailable.empty()) continue;
    if (p.role == Role::kRouter) {  // one router row per expert
      const std::string& name = c.format == FileFormat::kSafetensors ? p.hf_name : p.gguf_name;
      LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(name));
      if (f.view.shape.size() == 2 && f.view.shape[1] == c.hidden && f.view.shape[0] != c.num_experts)
        return ExpertCountError(f, name, c.num_experts);
    }
    Result<TensorView> fetched = Fetch(c, p, lookup);
    if (!fetched.ok() && mtp) {
      w.mtp_unavailable = fetched.status().message();
      continue;
    }
    LINEAGE_RETURN_IF_ERROR(fetched.status());
    const TensorView& v = *fetched;
    std::vector<float> small;
    if (IsSmallRole(p.role)) {
      small = SmallVector(c, p, v);
      LINEAGE_RETURN_IF_ERROR(MultiplyHfFactor(c, p, lookup, &small));
    }
    LayerWeights* L = mtp ? &w.mtp.layer : p.layer >= 0 ? &w.layers[p.layer] : nullptr;
    switch (p.role) {
      case Role::kEmbed: w.embed = v; break;
      case Role::kLmHead: w.lm_head = v; break;
      case Role::kFinalNorm: w.final_norm = std::move(small); break;
      case Role::kInputNorm: L->input_norm = std::move(small); break;
      case Role::kPostNorm: L->post_norm = std::move(small); break;
      case Role::kLinQkv: L->linear.in_proj_qkv = v; break;
      case Role::kLinZ: L->linear.in_proj_z = v; break;
      case Role::kLinB: L->linear.in_proj_b = v; break;
      case Role::kLinA: L->linear.in_proj_a = v; break;
      case Role::kLinConv: L->linear.conv = std::move(small); break;
      case Role::kLinDtBias: L->linear.dt_bias = std::move(small); break;
      case Role::kLinALog: L->linear.ssm_a = std::move(small); break;
      case Role::kLinNorm: L->linear.norm = std::move(small); break;
      case Role::kLinOut: L->linear.out_proj = v; break;
      case Role::kAttnQ: L->full.q_proj = v; break;
      case Role::kAttnK: L->full.k_proj = v; break;
      case Role::kAttnV: L->full.v_proj = v; break;
      case Role::kAttnO: L->full.o_proj = v; break;
      case Role::kAttnQNorm: L->full.q_norm = std::move(small); break;
      case Role::kAttnKNorm: L->full.k_norm = std::move(small); break;
      case Role::kFfnGate: L->gate_proj = v; break;
      case Role::kFfnUp: L->up_proj = v; break;
      case Role::kFfnDown: L->down_proj = v; break;
      case Role::kLinQkvz: L->linear.in_proj_qkvz = v; break;
      case Role::kLinBa: L->linear.in_proj_ba = v; break;
      case Role::kRouter: L->moe.router = v; break;
      case Role::kShGate: L->moe.shared_gate = v; break;
      case Role::kShUp: L->moe.shared_up = v; break;
      case Role::kShDown: L->moe.shared_down = v; break;
      case Role::kShGateInp: L->moe.shared_gate_inp = std::move(small); break;
      case Role::kExpGate: case Role::kExpUp: case Role::kExpDown: BindKimiExpert(c, p, v, &L->moe); break;
      case Role::kExpGateUp: break;
      case Role::kKdaQ: L->kda.q_proj = v; break;
      case Role::kKdaK: L->kda.k_proj = v; break;
      case Role::kKdaV: L->kda.v_proj = v; break;
      case Role::kKdaQConv: case Role::kKdaKConv: case Role::kKdaVConv:  // planned q, k, v in order
        L->kda.conv.insert(L->kda.conv.end(), small.begin(), small.end());
        break;
      case Role::kKdaFA: L->kda.f_a = v; break;
      case Role::kKdaFB: L->kda.f_b = v; break;
      case Role::kKdaB: L->kda.b_proj = v; break;
      case Role::kKdaALog: L->kda.ssm_a = std::move(small); break;
      case Role::kKdaDtBias: L->kda.dt_bias = std::move(small); break;
      case Role::kKdaGA: L->kda.g_a = v; break;
      case Role::kKdaGB: L->kda.g_b = v; break;
      case Role::kKdaNorm: L->kda.norm = std::move(small); break;
      case Role::kKdaOut: L->kda.o_proj = v; break;
      case Role::kMlaQ: L->mla.q_proj = v; break;
      case Role::kMlaKvA: L->mla.kv_a = v; break;
      case Role::kMlaKvANorm: L->mla.kv_a_norm = std::move(small); break;
      case Role::kMlaKvB: BindKvB(c, v, &L->mla); break;
      case Role::kMlaKB:
        for (int64_t h = 0; h < c.num_heads; ++h)
          L->mla.k_b_t.push_back(RowSlice(v, h * c.kv_lora_rank, c.kv_lora_rank, "[head " + std::to_string(h) + "]"));
        break;
      case Role::kMlaVB:
        for (int64_t h = 0; h < c.num_heads; ++h)
          L->mla.v_b.push_back(RowSlice(v, h * c.v_head_dim, c.v_head_dim, "[head " + std::to_string(h) + "]"));
        break;
      case Role::kMlaOut: L->mla.o_proj = v; break;
      case Role::kRouterBias: L->moe.score_bias = std::move(small); break;
      case Role::kMlaQA: L->mla.q_a = v; break;
      case Role::kMlaQANorm: L->mla.q_a_norm = std::move(small); break;
      case Role::kMlaQB: L->mla.q_b = v; break;
      case Role::kIdxQB: L->mla.indexer.q_b = v; break;
      case Role::kIdxK: L->mla.indexer.k = v; break;
      case Role::kIdxKNorm: L->mla.indexer.k_norm = std::move(small); break;
      case Role::kIdxKNormBias: L->mla.indexer.k_norm_bias = std::move(small); break;
      case Role::kIdxProj: L->mla.indexer.weights_proj = v; break;
      case Role::kKdaGFull: L->kda.g_full = v; break;
      case Role::kMlaGate: L->mla.out_gate = v; break;
      case Role::kMoeLatentDown: L->moe.latent_down = v; break;
      case Role::kMoeLatentUp: L->moe.latent_up = v; break;
      case Role::kMoeLatentNorm: L->moe.latent_norm = std::move(small); break;
      case Role::kAttnResScore: L->attn_res_score = std::move(small); break;
      case Role::kFfnResScore: L->ffn_res_score = std::move(small); break;
      case Role::kOutputResScore: w.output_res_score = std::move(small); break;
      case Role::kMtpEhProj: w.mtp.eh_proj = v; break;
      case Role::kMtpENorm: w.mtp.enorm = std::move(small); break;
      case Role::kMtpHNorm: w.mtp.hnorm = std::move(small); break;
      case Role::kMtpHeadNorm: w.mtp.head_norm = std::move(small); break;
    }
  }
  if (c.mtp()) w.mtp.layer.kind = LayerKind::kFullAttention;
  for (int64_t l = 0; l < c.num_layers + (c.mtp() ? 1 : 0); ++l) {
    LayerWeights& L = l < c.num_layers ? w.layers[l] : w.mtp.layer;
    if (c.moe() && !c.latent()) {
      Status s = BindExperts(c, l, lookup, &L.moe);
      if (!s.ok() && l >= c.num_layers && w.mtp_unavailable.empty()) w.mtp_unavailable = s.message();
      if (!s.ok() && l < c.num_layers) return s;
    }
    if (L.kind == LayerKind::kLinearAttention && c.arch == Arch::kQwen3Next) BuildGdnBlocks(c, &L.linear);
  }
  if (c.tied_embeddings) w.lm_head = w.embed;
  if (!w.mtp_unavailable.empty()) w.mtp = MtpWeights{};
  return w;
}

}  // namespace lineage::model
