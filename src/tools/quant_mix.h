// QuantMix: llama.cpp's quantization presets (Q4_K_M, Q5_K_M, Q6_K, Q8_0,
// Q4_0, IQ4_XS, MXFP4_MOE) as per-tensor block types, for `lineage mkmodel --dtype`.
//
// The rules are llama-quantize's (llama_tensor_get_type) for the tensors our
// archs have, and reproduce the per-tensor types of the llama.cpp-written
// files in ../shared/data/models (tested):
//   - 1-D tensors, norms, conv kernels, ssm_a / dt bias: F32 (as the converter);
//   - output (or token_embd when the embeddings are tied): Q6_K, Q8_0 for Q8_0;
//   - tensors chosen by name, as llama-quantize's tensor_get_category does:
//   - attn_v, attn_qkv (the GDN's too) and attn_kv_b of layer i (i of n):
//     Q4_K_M / Q5_K_M take Q6_K where use_more_bits(i, n) (the first and last
//     eighth and every third between); IQ4_XS takes Q5_K when n_head/n_kv >= 4;
//   - any ffn_down (a MoE's experts' and shared expert's too) of layer i:
//     Q4_K_M / Q5_K_M take Q6_K where use_more_bits(i, L); IQ4_XS takes Q5_K
//     in the first eighth of the layers;
//   - with exactly 8 experts (its n_expert == 8 rules): attn_v / attn_qkv and
//     attn_k Q8_0, attn_output Q5_K under Q4_K_M and IQ4_XS;
//   - the MoE router (ffn_gate_inp) F32;
//   - every other matrix: the preset's base type;
//   - MXFP4_MOE: stacked 3-D tensors (the routed experts; llama-quantize's
//     test is ne[2] > 1) MXFP4, every other matrix and the output Q8_0;
//   - a row that is not whole 256-element super-blocks falls back as
//     llama.cpp does: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, IQ4_XS -> IQ4_NL.
// Pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "core/dtype.h"
#include "model/config.h"
#include "model/tensor_plan.h"

namespace lineage::model {

enum class QuantPreset { kQ4_K_M, kQ5_K_M, kQ6_K, kQ8_0, kQ4_0, kIQ4_XS, kMXFP4_MOE };

// "q4_k_m", "q5_k_m", "q6_k", "q8_0", "q4_0", "iq4_xs", "mxfp4_moe".
std::optional<QuantPreset> ParseQuantPreset(std::string_view name);
std::string_view QuantPresetName(QuantPreset p);

// llama.cpp's general.file_type for the preset (LLAMA_FTYPE_MOSTLY_*).
uint32_t QuantPresetFileType(QuantPreset p);

// The block type of GGUF tensor `p` of a model `c` under preset `preset`.
DType PresetTensorType(QuantPreset preset, const ModelConfig& c, const PlannedTensor& p);

}  // namespace lineage::model
