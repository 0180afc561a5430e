#include "model/bind_weights.h"

#include <algorithm>

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
  if (p.role == Role::kLinALog)
    for (float& a : x) a = SsmAFromALog(a);
  return x;
}

}  // namespace

Result<Weights> BindWeights(const ModelConfig& c, const TensorLookup& lookup) {
  Weights w;
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int64_t l = 0; l < c.num_layers; ++l) w.layers[l].kind = c.layer_kinds[l];
  for (const PlannedTensor& p : PlanTensors(c)) {
    LINEAGE_ASSIGN_OR_RETURN(TensorView v, Fetch(c, p, lookup));
    std::vector<float> small;
    if (IsSmallRole(p.role)) small = SmallVector(c, p, v);
    LayerWeights* L = p.layer >= 0 ? &w.layers[p.layer] : nullptr;
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
    }
  }
  if (c.tied_embeddings) w.lm_head = w.embed;
  return w;
}

}  // namespace lineage::model
