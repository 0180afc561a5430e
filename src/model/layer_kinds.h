// Layer kinds (DESIGN.md §4): every layer of a model is a (mixer,
// feed-forward) pair, and what the rest of the project needs to know of a
// kind without running it is in one table here: its name, whether it keeps
// a fixed-size recurrent state or per-token rows in the KV pages, and how
// many of each it keeps. The forward of each kind is in its own engine file
// (engine/layer_table.h maps kinds to them), its tensors in tensor_plan.cpp,
// its plain reference in reference_forward.cpp.
//
// ModelConfig::mixer(l) / ffn(l) give a layer's kinds; a file's format says
// which layers hold KV rows (layer_kinds), its architecture which kind those
// and the others are.
#pragma once

#include <cstdint>

namespace lineage::model {

struct ModelConfig;

enum class MixerKind : uint8_t {
  kGatedDeltaNet,  // Qwen3.5 / Qwen3-Next linear attention (spec §2)
  kKimiDelta,      // Kimi Delta Attention (spec §7.2; K3's bounded decay and full-rank gate)
  kAttention,      // softmax GQA over per-head keys and values (spec §3, §11)
  kLatent,         // MLA over one latent row per token (spec §7.3; K3's output gate)
  kSparseLatent,   // MLA over the lightning indexer's top-k latent rows (latent-attention §1)
};

enum class FfnKind : uint8_t {
  kDense,         // SwiGLU (SiTU in K3)
  kMoe,           // softmax router, top k renormalised, a sigmoid-gated shared expert (spec §4.3)
  kDeepseekMoe,   // sigmoid router with bias and groups, an ungated shared expert; K3's latent form (§7.4)
};

struct MixerKindInfo {
  const char* name;
  bool recurrent;  // a fixed-size state per sequence; otherwise rows in the KV pages
  // fp32 values layer l keeps: per token in the KV pages, and in its
  // recurrent state per sequence.
  int64_t (*kv_floats_per_token)(const ModelConfig& c, int64_t layer);
  int64_t (*state_floats)(const ModelConfig& c);
};

struct FfnKindInfo {
  const char* name;
};

const MixerKindInfo& Info(MixerKind k);
const FfnKindInfo& Info(FfnKind k);

}  // namespace lineage::model
