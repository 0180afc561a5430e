// Random-weight models in Hugging Face conventions, for tests and mkmodel.
//
// Values are a pure function of (seed, tensor name, element index): any
// element range of any tensor can be produced on its own, so writers stream
// a tensor row by row and never hold a whole model. Scales keep activations
// O(1) through every layer (checked by the reference forward in tests):
//   - projections: uniform with std 1/sqrt(fan_in), except the GDN out_proj
//     at 0.25/sqrt(fan_in): at full scale the stack of GDN layers amplifies
//     weight rounding ~60x (bf16 weights moved the logits by 20%), at 0.25
//     about as much as attention layers do (~3%);
//   - embedding (tied lm_head): std 2/sqrt(H), so logits have std ~2;
//   - zero-centred norms (HF qwen3_5): w with std 0.1 (scale 1 + w);
//     plain norms (qwen3, GDN output norm): 1 + (std 0.1);
//   - conv kernel std 1/sqrt(K); dt_bias in [-1, 1]; A_log in [-0.7, 1.4];
//   - routed experts: keyed by (layer, expert, matrix) rather than by tensor
//     name, so stacked, merged and per-expert layouts hold the same values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "model/shapes.h"
#include "model/tensor_plan.h"
#include "model/weights.h"

namespace lineage::model {

// Writes elements [begin, begin + n) (flat, row-major HF order) of tensor `p`.
void FillRandom(Arch arch, const PlannedTensor& p, uint64_t seed, int64_t begin, int64_t n, float* out);

// The HF tensors that hold `p`: its hf_name, and its hf_factor_name where
// the checkpoint stores it as a product.
std::vector<std::string> HfTensorNames(const PlannedTensor& p);
// Elements [begin, begin + n) of HF tensor `name` of `p`. A product's random
// value v is stored as v / f in hf_name and f in hf_factor_name, f one of
// 1, 2, 1/2, 4 by position: powers of two, so that the loader's product is
// v again in every stored dtype.
void FillHfRandom(Arch arch, const PlannedTensor& p, const std::string& name, uint64_t seed, int64_t begin,
                  int64_t n, float* out);
// HF tensor `name` of `p` row by row, each row encoded as `stored`: `write`
// gets the bytes of one row at a time, in order; its first error stops it.
Status WriteHfRows(Arch arch, const PlannedTensor& p, const std::string& name, uint64_t seed, DType stored,
                   const std::function<Status(const uint8_t* bytes, size_t n)>& write);

// The dtype an HF checkpoint of weight type `dtype` stores `p` in: A_log is
// always f32 (as in the released checkpoints); under q8_0 (in memory only)
// vectors and the MoE router stay f32 and matrices whose rows are not a
// multiple of 32 are f16.
DType HfStoredDType(const PlannedTensor& p, DType dtype);

// An in-memory model (config.format = kSafetensors, grouped V heads) whose
// weights equal what WriteModel(safetensors) + LoadModel would give for the
// same spec, dtype and seed. `dtype`: f32, f16, bf16 or q8_0.
Result<std::shared_ptr<const Model>> MakeRandomModel(const ModelSpec& spec, DType dtype, uint64_t seed);

// The config a model written from `spec` in HF layout reports.
ModelConfig HfConfigFor(const ModelSpec& spec);

}  // namespace lineage::model
