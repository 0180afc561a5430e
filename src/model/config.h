// ModelConfig: the architecture hyper-parameters of a loaded model, read from
// config.json or GGUF metadata (never assumed), plus the conventions of the
// file it came from that the forward pass must respect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "kinds/dense_ffn/situ_config.h"
#include "kinds/gated_deltanet/delta_config.h"
#include "kinds/latent_attention/latent_config.h"
#include "kinds/moe/expert_config.h"
#include "kinds/sparse_latent_attention/indexer_config.h"
#include "model/layer_kinds.h"

namespace lineage::model {

// kQwen3_5Moe and kQwen3Next are the Qwen3.5 hybrid stack with a sparse MoE
// FFN in every layer (spec §4.3); kQwen3Next also has its own fused GDN
// input projections (spec §2.1, §5.2).
// kKimiLinear is Kimi Linear (spec §7): KDA layers where the Qwen stack has
// GDN (LayerKind::kLinearAttention), latent attention (MLA, NoPE) where it
// has full attention (LayerKind::kFullAttention), and the DeepSeek-V3 MoE.
// kGlmDsa (GLM-5.x) and kDeepseek32 (DeepSeek-V3.2) are all latent
// attention with a query LoRA, rotary dims and the lightning indexer's
// sparse selection (spec latent-attention §1), plus the DeepSeek-V3 MoE.
// kKdaDsa is the hybrid the cache was designed for: Kimi Linear's KDA layers
// with the sparse latent attention of kGlmDsa where Kimi has dense MLA.
// kKimiK3 is Kimi Linear's skeleton with a lower-bounded KDA decay and a
// full-rank KDA output gate, NoPE MLA with an output gate, a latent MoE, the
// SiTU activation and Block AttnRes (spec latent-attention §2).
enum class Arch { kQwen3_5, kQwen3, kQwen3_5Moe, kQwen3Next, kKimiLinear, kGlmDsa, kDeepseek32, kKdaDsa, kKimiK3 };
// What a file says of one layer: recurrent, or attention with KV rows
// (StackLayers makes the layers' kinds from it).
enum class LayerKind { kLinearAttention, kFullAttention };
enum class FileFormat { kSafetensors, kGguf };

inline bool IsHybrid(Arch a);

struct ModelConfig {
  Arch arch = Arch::kQwen3_5;
  FileFormat format = FileFormat::kSafetensors;
  std::string source_path;           // directory or .gguf file

  int64_t hidden = 0;                // H
  int64_t num_layers = 0;            // L (trunk only; an MTP block is not counted)
  // Multi-token-prediction (NextN) blocks the file carries after the trunk
  // (GGUF nextn_predict_layers, HF mtp_num_hidden_layers /
  // num_nextn_predict_layers). The first one, at layer index L, is a draft
  // head for speculative decoding; the plain forward never runs it.
  int64_t mtp_layers = 0;
  int64_t intermediate = 0;          // dense FFN width
  int64_t vocab = 0;
  int64_t context_length = 0;        // max positions
  double rms_eps = 1e-6;
  bool tied_embeddings = false;

  // Full-attention layers.
  int64_t num_heads = 0;             // n_h
  int64_t num_kv_heads = 0;          // n_kv
  int64_t head_dim = 0;              // hd (256 for qwen3_5, 128 for qwen3; not H / n_h)
  bool attn_output_gate = false;     // qwen3_5: q_proj is 2x wide, [q_h | gate_h] per head
  double rope_theta = 1e6;
  int64_t rope_dims = 0;             // rotated dims per head (64 for qwen3_5, hd for qwen3)
  bool zero_centred_norms = false;   // fold (1 + w) when binding norm weights (HF qwen3_5 only)

  // The layers, each a (mixer, feed-forward) pair of kinds (layer_kinds.h);
  // size num_layers.
  std::vector<LayerPair> layers;

  // The kinds' own hyperparameters, each a struct in its kind's folder
  // (docs/layer-kinds.md): the delta-rule mixers' widths (GDN, KDA), latent
  // attention's (dense and sparse), the lightning indexer's, the MoE
  // feed-forwards' and the SwiGLU's K3 form.
  DeltaConfig delta;
  LatentConfig mla;
  IndexerConfig indexer;
  ExpertConfig experts;
  SituConfig situ;

  // Kimi K3's Block AttnRes (spec latent-attention §2): the residual
  // stream's block size (0: the plain residual stream).
  int64_t attn_res_block = 0;

  // Special token ids from the model's files; -1 when absent.
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;

  bool moe() const { return experts.count > 0; }
  // True when the file's first MTP block is bound as a draft head: the Qwen
  // hybrids and the DeepSeek-style latent archs (GLM-DSA, DeepSeek-V3.2).
  bool mtp() const {
    return mtp_layers > 0 && (IsHybrid(arch) || arch == Arch::kGlmDsa || arch == Arch::kDeepseek32);
  }
  // Latent attention where the others have full attention, and the
  // DeepSeek-V3 MoE: kimi_linear, glm-dsa, deepseek32, kda-dsa.
  bool latent() const { return arch == Arch::kKimiLinear || arch == Arch::kGlmDsa || arch == Arch::kDeepseek32 ||
                             arch == Arch::kKdaDsa || arch == Arch::kKimiK3; }
  bool sparse() const { return indexer.heads > 0; }
  // Layer l's kinds. l = L is the MTP block: the trunk's attention kind
  // (dense latent attention where the trunk's is sparse, as llama.cpp
  // drafts) and the last layer's feed-forward.
  MixerKind mixer(int64_t l) const;
  FfnKind ffn(int64_t l) const { return l < num_layers ? layers[l].ffn : layers.back().ffn; }
  // True when layer l's mixer keeps a recurrent state (GDN, KDA) rather
  // than KV rows.
  bool recurrent(int64_t l) const;
  // True when layer l's FFN is a sparse MoE (every layer of a MoE model but
  // Kimi's leading dense ones).
  bool moe_layer(int64_t l) const { return ffn(l) != FfnKind::kDense; }
  int64_t num_full_layers() const;
  int64_t num_linear_layers() const;
  // fp32 bytes of the KV of one token across all layers (layer_kinds.h).
  int64_t kv_bytes_per_token() const;
  // fp32 bytes of the recurrent state of all recurrent layers of one sequence.
  int64_t recurrent_bytes() const;
};

inline constexpr Arch kAllArchs[] = {Arch::kQwen3_5, Arch::kQwen3,  Arch::kQwen3_5Moe, Arch::kQwen3Next, Arch::kKimiLinear,
                                     Arch::kGlmDsa,  Arch::kDeepseek32, Arch::kKdaDsa,  Arch::kKimiK3};

// "qwen3_5", "qwen3", "qwen3_5_moe", "qwen3_next", "kimi_linear", "glm_dsa", "deepseek32", "kda_dsa", "kimi_k3"
const char* ArchName(Arch a);
// Every ArchName, comma-separated, for help texts and errors.
std::string ArchNameList();

// The Qwen3.5 hybrid stack (GDN + gated attention): every arch but qwen3 and
// kimi_linear (a hybrid too, with its own layers).
inline bool IsHybrid(Arch a) {
  return a == Arch::kQwen3_5 || a == Arch::kQwen3_5Moe || a == Arch::kQwen3Next;
}
// Archs whose checkpoints use Kimi's names (linear_attn_config, num_experts,
// block_sparse_moe.*): kimi_linear, the design's kda_dsa, kimi_k3; GLM-5
// and DeepSeek-V3.2 use DeepSeek's.
inline bool KimiNamed(Arch a) { return a == Arch::kKimiLinear || a == Arch::kKdaDsa || a == Arch::kKimiK3; }
// Archs whose latent attention is NoPE: Kimi Linear and K3.
inline bool NopeLatent(Arch a) { return a == Arch::kKimiLinear || a == Arch::kKimiK3; }
// Archs whose FFN is a sparse MoE: spec §4.3, or §7.4 for the latent archs.
inline bool IsMoeArch(Arch a) { return a != Arch::kQwen3_5 && a != Arch::kQwen3; }
// Archs whose GGUF stores GDN value heads tiled (the Qwen3.5 converter's
// permutation, spec §2.4); Qwen3-Next keeps them grouped.
inline bool GgufTilesVHeads(Arch a) { return a == Arch::kQwen3_5 || a == Arch::kQwen3_5Moe; }


// The kinds an architecture's layers are made of, before its kinds'
// readers refine them: recurrent layers, attention layers, feed-forwards.
struct ArchKinds {
  MixerKind recurrent;
  MixerKind attention;
  FfnKind ffn;
};
ArchKinds KindsOf(Arch a);
// The layers of an `a` model whose file marks each layer recurrent
// (kLinearAttention) or attention (kFullAttention).
std::vector<LayerPair> StackLayers(Arch a, const std::vector<LayerKind>& flags);
// The layers of an `a` model with attention in all `num_layers` of them.
std::vector<LayerPair> AttentionLayers(Arch a, int64_t num_layers);
// The per-layer flags again, as the files store them.
std::vector<LayerKind> LayerFlags(const ModelConfig& c);

// Bounds on what a model file may declare. Far above any real checkpoint,
// and low enough that a corrupt count fails before anything is allocated and
// that every tensor size derived from them fits in int64_t.
struct ConfigLimits {
  static constexpr int64_t kMaxLayers = 4096;
  static constexpr int64_t kMaxHidden = int64_t{1} << 17;
  static constexpr int64_t kMaxIntermediate = int64_t{1} << 20;
  static constexpr int64_t kMaxExperts = int64_t{1} << 12;
  static constexpr int64_t kMaxVocab = int64_t{1} << 21;
  static constexpr int64_t kMaxHeads = int64_t{1} << 12;
  static constexpr int64_t kMaxHeadDim = int64_t{1} << 12;
  static constexpr int64_t kMaxConvKernel = 64;
  static constexpr int64_t kMaxContext = int64_t{1} << 24;  // 0 means "not stated"
  static constexpr int64_t kMaxTokenId = (int64_t{1} << 31) - 1;
  static constexpr double kMaxRmsEps = 1.0;
  static constexpr double kMaxRopeTheta = 1e12;
};

// Checks every size of `c` against ConfigLimits and against each other
// (heads divide, rope dims fit a head, one kind per layer, finite positive
// eps and theta) and that the total parameter count fits in int64_t. Both
// loaders call it before planning tensors; errors name c.source_path.
Status ValidateConfig(const ModelConfig& c);
// InvalidArgument naming c's file and `field` unless min <= v <= max.
Status CheckRange(const ModelConfig& c, const char* field, int64_t v, int64_t min, int64_t max);

}  // namespace lineage::model
