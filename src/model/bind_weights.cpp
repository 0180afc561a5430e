#include "model/bind_weights.h"

#include <algorithm>

#include "core/tensor_slice.h"
#include "model/encode.h"
#include "model/kind_binding.h"
#include "model/layer_kinds.h"
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
bool ShapeMatches(const PlannedTensor& p, const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  if (IsSmall(p)) return Squeezed(got) == Squeezed(want);
  return got == want;
}

Result<TensorView> Fetch(const ModelConfig& c, const PlannedTensor& p, const TensorLookup& lookup) {
  const bool hf = c.format == FileFormat::kSafetensors;
  const std::string& name = hf ? p.hf_name : p.gguf_name;
  const std::vector<int64_t>& want = hf ? p.hf_shape : p.gguf_shape;
  LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(name));
  if (!ShapeMatches(p, f.view.shape, want))
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
  if (IsZeroCentredNorm(p, c.arch))
    for (float& w : x) w = 1.0f + w;
  if (p.values == Values::kALog)
    for (float& a : x) a = SsmAFromALog(a);
  return x;
}

// A vector the HF checkpoint stores as two factors (PlannedTensor::
// hf_factor_name): x times the second, as the GGUF converter fuses them.
Status MultiplyHfFactor(const ModelConfig& c, const PlannedTensor& p, const TensorLookup& lookup,
                        std::vector<float>* x) {
  if (c.format != FileFormat::kSafetensors || p.hf_factor_name.empty()) return Status::Ok();
  LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(p.hf_factor_name));
  if (!ShapeMatches(p, f.view.shape, p.hf_shape))
    return InvalidArgument(f.file + ": tensor '" + p.hf_factor_name + "' has shape " + ShapeString(f.view.shape) +
                           ", expected " + ShapeString(p.hf_shape) + " (that of '" + p.hf_name + "')");
  const std::vector<float> factor = DecodeAll(f.view);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] *= factor[i];
  return Status::Ok();
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
    const bool declared_mla = !c.recurrent(l);
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

}  // namespace

Result<TensorView> FetchPlanned(const ModelConfig& c, const PlannedTensor& p, const TensorLookup& lookup) {
  return Fetch(c, p, lookup);
}

Status ExpertCountError(const FoundTensor& f, const std::string& name, int64_t declared) {
  return InvalidArgument(f.file + ": tensor '" + name + "' holds " + std::to_string(f.view.shape[0]) +
                         " experts but the model declares " + std::to_string(declared) + " (expert count)");
}

std::string ExpertSuffix(int64_t e) { return "[expert " + std::to_string(e) + "]"; }

Result<Weights> BindWeights(const ModelConfig& c, const TensorLookup& lookup) {
  if (c.num_linear_layers() > 0 && c.latent()) LINEAGE_RETURN_IF_ERROR(CheckKimiLayerKinds(c, lookup));
  Weights w;
  w.layers.resize(static_cast<size_t>(c.num_layers));
  const std::vector<LayerKind> flags = LayerFlags(c);
  for (int64_t l = 0; l < c.num_layers; ++l) w.layers[l].kind = flags[l];
  for (const PlannedTensor& p : PlanTensors(c)) {
    if (IsExpertRole(p.role) && !c.latent()) continue;  // the MoE kind's finish, below
    const bool mtp = p.layer >= c.num_layers;  // the MTP block: a draft head, not needed to run the model
    if (mtp && !w.mtp_unavailable.empty()) continue;
    if (p.role == Role::kRouter) {  // one router row per expert
      const std::string& name = c.format == FileFormat::kSafetensors ? p.hf_name : p.gguf_name;
      LINEAGE_ASSIGN_OR_RETURN(FoundTensor f, lookup(name));
      if (f.view.shape.size() == 2 && f.view.shape[1] == c.hidden && f.view.shape[0] != c.experts.count)
        return ExpertCountError(f, name, c.experts.count);
    }
    Result<TensorView> fetched = Fetch(c, p, lookup);
    if (!fetched.ok() && mtp) {
      w.mtp_unavailable = fetched.status().message();
      continue;
    }
    LINEAGE_RETURN_IF_ERROR(fetched.status());
    const TensorView& v = *fetched;
    std::vector<float> small;
    if (IsSmall(p)) {
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
      case Role::kAttnResScore: L->attn_res_score = std::move(small); break;
      case Role::kFfnResScore: L->ffn_res_score = std::move(small); break;
      case Role::kOutputResScore: w.output_res_score = std::move(small); break;
      case Role::kMtpEhProj: w.mtp.eh_proj = v; break;
      case Role::kMtpENorm: w.mtp.enorm = std::move(small); break;
      case Role::kMtpHNorm: w.mtp.hnorm = std::move(small); break;
      case Role::kMtpHeadNorm: w.mtp.head_norm = std::move(small); break;
      default: {  // a role of the layer's mixer or feed-forward kind
        const BoundTensor t{c, p, v, small};
        const int64_t l = p.layer;
        if (!Info(c.mixer(l)).tensors.bind(t, *L) && !Info(c.ffn(l)).tensors.bind(t, *L))
          return InvalidArgument(p.gguf_name + ": no kind of layer " + std::to_string(l) + " binds this tensor");
      }
    }
  }
  if (c.mtp()) w.mtp.layer.kind = LayerKind::kFullAttention;
  for (int64_t l = 0; l < c.num_layers + (c.mtp() ? 1 : 0); ++l) {
    LayerWeights& L = l < c.num_layers ? w.layers[l] : w.mtp.layer;
    const LayerBinder b{c, l, lookup};
    for (auto finish : {Info(c.mixer(l)).tensors.finish, Info(c.ffn(l)).tensors.finish}) {
      if (finish == nullptr) continue;
      Status s = finish(b, L);
      if (!s.ok() && l >= c.num_layers && w.mtp_unavailable.empty()) w.mtp_unavailable = s.message();
      if (!s.ok() && l < c.num_layers) return s;
    }
  }
  if (c.tied_embeddings) w.lm_head = w.embed;
  if (!w.mtp_unavailable.empty()) w.mtp = MtpWeights{};
  return w;
}

}  // namespace lineage::model
