// ModelSpec and the shape table: the hyper-parameters of the models mkmodel
// can write, per architecture, taken from the real configs (spec §1.2, §11)
// plus a `tiny` shape that exercises every pitfall of spec §9 cheaply.
//
// tiny / qwen3_5: hidden 128, 8 layers (full attention at 3 and 7), 4 / 2
//   query / kv heads of 64 dims with 16 rotary dims, GDN H_k 2 / H_v 4 heads
//   of 32 dims (so r = 2 and the V-head order matters), conv 4,
//   intermediate 256, vocab 1024.
// tiny / qwen3: hidden 128, 4 layers, 4 / 2 heads of 32 dims,
//   intermediate 256, vocab 1024.
// tiny / qwen3_5_moe and qwen3_next: the tiny qwen3_5 trunk, untied, with a
//   MoE FFN of 8 experts of width 64 (top-2 / top-3) and a shared expert of
//   width 96. The real qwen3.5-35b-a3b and qwen3-next-80b-a3b shapes follow
//   spec §1.2.
// tiny / kimi_linear: hidden 128, 8 layers (MLA at 3 and 7, the rest KDA),
//   KDA 4 heads of 32, MLA 4 heads with kv_lora_rank 32, qk_nope 32,
//   qk_rope 16, v 32; layer 0 a dense FFN of 256, the others 8 experts of
//   64 (top-2, x 2.446) and a shared expert of 64; vocab 1024. The real
//   kimi-linear-48b-a3b follows spec §7.1.
//
// tiny / glm_dsa, deepseek32: hidden 128, 6 latent layers of 4 heads (q_lora
//   64, kv_lora 48, qk_nope 32, qk_rope 16, v 32), an indexer of 8 heads of
//   64 with top_k 16; glm_dsa's indexer types [1,1,0,0,1,0]; deepseek32's 8
//   experts in 4 groups of which 2 are used and YaRN (factor 4 over 32
//   positions); layer 0 dense. glm-5 / glm-5.2 and deepseek-v3.2 follow spec
//   latent-attention §3.1 (DeepSeek-V3.2's YaRN: 40 over 4096).
// tiny / kda_dsa: KDA of 2 heads of 32 (fewer than the 4 latent heads) with the sparse latent layers of
//   tiny glm_dsa at 3 and 7 (7 sharing 3's selection). glm-5.3-flash is the
//   model the cache was designed for (seeds/000): 45 layers, 34 KDA of 64
//   heads x 128 and 11 sparse latent layers (every fourth), hidden 2048,
//   64 experts of 1536 (top 4) and a shared one; widths the seed does not
//   give are GLM-4.7-Flash's, the indexer GLM-5's.
//
// tiny / kimi_k3: the layout of the oracle tiny-kimi-k3.gguf (KKKA KKKA, 4
//   heads for KDA and MLA, a latent MoE of 64, SiTU 4 / 25, AttnRes blocks of
//   3, KDA gate bound -5) at hidden 128; kimi-k3 follows spec
//   latent-attention §3.3 (93 layers, 896 experts).
//
// A ModelSpec is a plain value; `config` is complete except for the file
// fields (format, source_path, delta.v_head_order, zero_centred_norms), which
// describe a file rather than a shape.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/config.h"

namespace lineage::model {

struct ModelSpec {
  std::string shape;            // "tiny", "qwen3.5-0.8b", "qwen3-0.6b", or a test's own name
  ModelConfig config;
  // M-RoPE sections (pairs of rotary dims per position component) written to
  // the files; text-only input makes them irrelevant to the math.
  std::vector<int64_t> mrope_sections;
};

// The spec for `shape` of `arch`; `vocab_override` > 0 replaces the vocabulary
// size. NotFound for an unknown shape, InvalidArgument for a mismatched
// arch/shape pair (qwen3-0.6b is qwen3 only, qwen3.5-0.8b qwen3_5 only).
Result<ModelSpec> LookupShape(Arch arch, std::string_view shape, int64_t vocab_override = 0);

// `spec` cut to its first `num_layers` layers (a real shape that fits a
// small machine); the shape name gets a "-<N>l" suffix. InvalidArgument when
// N is out of range or leaves a hybrid model without an attention layer.
Result<ModelSpec> CutLayers(ModelSpec spec, int64_t num_layers);

// Parses "qwen3_5" / "qwen3" / "qwen3_5_moe" / "qwen3_next" / "kimi_linear" /
// "glm_dsa" / "deepseek32" / "kda_dsa".
Result<Arch> ParseArch(std::string_view name);

// GLM-5.2's indexer layer types (spec latent-attention §1.6): full at 0, 1,
// 2, then every fourth layer from 6; the others share.
std::vector<bool> Glm52IndexerTypes(int64_t num_layers);

// Layer kinds from `full_attention_interval`: layer i is full iff (i + 1) % interval == 0.
std::vector<LayerKind> LayerKindsFromInterval(int64_t num_layers, int64_t interval);

}  // namespace lineage::model
