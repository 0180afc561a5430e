#include "tools/quant_mix.h"

namespace lineage::model {
namespace {

struct PresetInfo {
  QuantPreset preset;
  std::string_view name;
  DType base;
  uint32_t file_type;
};
constexpr PresetInfo kPresets[] = {
    {QuantPreset::kQ4_K_M, "q4_k_m", DType::kQ4_K, 15}, {QuantPreset::kQ5_K_M, "q5_k_m", DType::kQ5_K, 17},
    {QuantPreset::kQ6_K, "q6_k", DType::kQ6_K, 18},     {QuantPreset::kQ8_0, "q8_0", DType::kQ8_0, 7},
    {QuantPreset::kQ4_0, "q4_0", DType::kQ4_0, 2},      {QuantPreset::kIQ4_XS, "iq4_xs", DType::kIQ4_XS, 30},
    {QuantPreset::kMXFP4_MOE, "mxfp4_moe", DType::kQ8_0, 38},
};

const PresetInfo& Find(QuantPreset p) {
  for (const PresetInfo& i : kPresets)
    if (i.preset == p) return i;
  return kPresets[0];
}

// llama.cpp's use_more_bits: the first and last eighth, and every third in between.
bool UseMoreBits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// llama-quantize picks its rules by tensor name (tensor_get_category): a
// name holding `part`.
bool Named(const PlannedTensor& p, const char* part) { return p.gguf_name.find(part) != std::string::npos; }

DType Fallback(DType t, int64_t cols) {
  if (cols % 256 != 0) {
    switch (t) {
      case DType::kQ4_K: t = DType::kQ5_0; break;
      case DType::kQ5_K: t = DType::kQ5_1; break;
      case DType::kQ6_K: t = DType::kQ8_0; break;
      case DType::kIQ4_XS: t = DType::kIQ4_NL; break;
      default: break;
    }
  }
  return cols % Info(t).block_elements == 0 ? t : DType::kF16;  // as the converter does for Q8_0
}

}  // namespace

std::optional<QuantPreset> ParseQuantPreset(std::string_view name) {
  for (const PresetInfo& i : kPresets)
    if (i.name == name) return i.preset;
  return std::nullopt;
}

std::string_view QuantPresetName(QuantPreset p) { return Find(p).name; }
uint32_t QuantPresetFileType(QuantPreset p) { return Find(p).file_type; }

DType PresetTensorType(QuantPreset preset, const ModelConfig& c, const PlannedTensor& p) {
  const bool is_weight = p.gguf_name.size() > 7 && p.gguf_name.compare(p.gguf_name.size() - 7, 7, ".weight") == 0;
  // The router stays f32 (llama-quantize never quantizes ffn_gate_inp).
  if (p.gguf_shape.size() <= 1 || IsSmall(p) || !is_weight || p.values == Values::kF32Matrix) return DType::kF32;
  const bool k_mix = preset == QuantPreset::kQ4_K_M || preset == QuantPreset::kQ5_K_M;
  const bool eight_experts = c.moe() && c.experts.count == 8;  // llama-quantize's n_expert == 8 rules
  DType t = Find(preset).base;
  const bool is_output = p.role == Role::kLmHead || (p.role == Role::kEmbed && c.tied_embeddings);
  if (preset == QuantPreset::kMXFP4_MOE) {
    // Stacked 3-D tensors (ne[2] > 1: the routed experts, and the MLA
    // attn_k_b / attn_v_b, which llama-quantize matches too) take MXFP4.
    const bool stacked = p.gguf_shape.size() == 3 && p.gguf_shape[0] > 1 && !is_output;
    return Fallback(stacked ? DType::kMXFP4 : DType::kQ8_0, p.gguf_shape.back());
  }
  if (is_output) {
    if (preset != QuantPreset::kQ8_0) t = DType::kQ6_K;
  } else if (Named(p, "attn_v.weight") || Named(p, "attn_qkv.weight") || Named(p, "attn_kv_b.weight")) {
    if (k_mix && UseMoreBits(p.layer, c.num_layers)) t = DType::kQ6_K;
    if (preset == QuantPreset::kIQ4_XS && c.num_kv_heads > 0 && c.num_heads / c.num_kv_heads >= 4) t = DType::kQ5_K;
    if (eight_experts) t = DType::kQ8_0;  // "trades just ~128MB" for the 8-expert models
  } else if (Named(p, "attn_k.weight")) {
    if (eight_experts) t = DType::kQ8_0;
  } else if (Named(p, "attn_output.weight")) {
    if (eight_experts && (preset == QuantPreset::kQ4_K_M || preset == QuantPreset::kIQ4_XS)) t = DType::kQ5_K;
  } else if (Named(p, "ffn_down")) {
    if (k_mix && UseMoreBits(p.layer, c.num_layers)) t = DType::kQ6_K;
    if (preset == QuantPreset::kIQ4_XS && p.layer < c.num_layers / 8) t = DType::kQ5_K;
  }
  return Fallback(t, p.gguf_shape.back());
}

}  // namespace lineage::model
