// ModelConfig: the architecture hyper-parameters of a loaded model, read from
// config.json or GGUF metadata (never assumed), plus the conventions of the
// file it came from that the forward pass must respect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
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
enum class LayerKind { kLinearAttention, kFullAttention };
enum class FileFormat { kSafetensors, kGguf };

// How GDN value heads map to key heads when H_v > H_k (spec §2.4):
// grouped (HF): value head h uses key head h / r; tiled (Qwen3.5 GGUF): h % H_k.
enum class VHeadOrder { kGrouped, kTiled };

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

  // Gated DeltaNet layers (qwen3_5).
  int64_t lin_num_k_heads = 0;       // H_k
  int64_t lin_num_v_heads = 0;       // H_v
  int64_t lin_k_dim = 0;             // d_k
  int64_t lin_v_dim = 0;             // d_v
  int64_t conv_kernel = 4;           // K
  VHeadOrder v_head_order = VHeadOrder::kGrouped;

  std::vector<LayerKind> layer_kinds;  // size num_layers

  // Sparse MoE FFN (qwen3_5_moe, qwen3_next; zero for dense models): a
  // softmax router over all experts, the top `experts_per_token` renormalised
  // to sum to 1, plus a shared expert scaled by sigmoid(x . shared gate).
  int64_t num_experts = 0;           // E
  int64_t experts_per_token = 0;     // k
  int64_t expert_intermediate = 0;   // width of one routed expert's SwiGLU
  int64_t shared_intermediate = 0;   // width of the shared expert's SwiGLU

  // Kimi Linear (kimi_linear, spec §7.3, §7.4; zero elsewhere). An MLA layer
  // has num_heads query heads of head_dim = qk_nope_dim + qk_rope_dim and one
  // latent "KV head" [c_kv (kv_lora_rank) | k_pe (qk_rope_dim)] per token;
  // rope_dims = qk_rope_dim although nothing is rotated (NoPE).
  int64_t kv_lora_rank = 0;          // 512
  int64_t qk_nope_dim = 0;           // 128
  int64_t qk_rope_dim = 0;           // 64
  int64_t v_head_dim = 0;            // 128
  // DeepSeek-V3 MoE: sigmoid router, top-k on score + e_score_correction_bias,
  // the chosen scores renormalised and times routed_scaling; a shared expert
  // without gate; layers [0, leading_dense_layers) have a dense FFN of width
  // `intermediate`.
  int64_t leading_dense_layers = 0;
  double routed_scaling = 1.0;
  bool routed_renormalise = true;    // expert_weights_norm / norm_topk_prob
  // Group-limited routing (DeepSeek-V3.2: 8 groups, 4 used): a group scores
  // the sum of its two best biased scores; experts outside the best
  // `expert_groups_used` groups are not chosen. 1 / 1: no grouping.
  int64_t expert_groups = 1;
  int64_t expert_groups_used = 1;

  // Latent attention of glm-dsa / deepseek32 (spec latent-attention §1.1):
  // q = q_b rmsnorm(q_a xn) when q_lora_rank > 0 (else q_proj xn, Kimi), and
  // q_pe, k_pe rotated with interleaved pairs (2i, 2i+1) when latent_rope
  // (Kimi: NoPE).
  int64_t q_lora_rank = 0;
  bool latent_rope = false;
  // The lightning indexer: the sparse latent attention kind's own fields.
  IndexerConfig indexer;

  // YaRN scaling of latent attention's rotary dims (DeepSeek-V3.2: factor
  // 40 over 4096 positions; spec latent-attention §1.5); factor 0: none.
  double yarn_factor = 0;              // s
  int64_t yarn_original_context = 0;   // the positions trained before scaling
  double yarn_mscale_all_dim = 0;      // the attention scale's mscale = 1 + 0.1 * this * ln s
  // The latent attention's score scale: mscale^2 / sqrt(dn + dr).
  double latent_scale() const;

  // Kimi K3 (spec latent-attention §2; zero elsewhere).
  double kda_gate_lower_bound = 0;   // < 0: g = lb sigmoid(exp(A_log) (f + dt_bias)); 0: Kimi's softplus form
  int64_t expert_latent = 0;         // the latent MoE's width (0: experts at hidden)
  double situ_beta = 0;              // > 0: every FFN activates with SiTU(g, u), not silu(g) u
  double situ_linear_beta = 0;       // SiTU's u factor lambda tanh(u / lambda); <= 0: u
  int64_t attn_res_block = 0;        // Block AttnRes' block size (0: the plain residual stream)

  // Special token ids from the model's files; -1 when absent.
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;

  bool moe() const { return num_experts > 0; }
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
  // True when layer l's FFN is the sparse MoE (every layer of a MoE model but
  // Kimi's leading dense ones).
  bool moe_layer(int64_t l) const { return moe() && l >= leading_dense_layers; }
  // Layer l's kinds (model/layer_kinds.h): which layers hold KV rows is the
  // file's layer_kinds; what each kind is, the architecture's. l = L is the
  // MTP block: the arch's attention kind (dense latent attention on the
  // latent archs, as llama.cpp drafts with) and its FFN kind.
  MixerKind mixer(int64_t l) const;
  FfnKind ffn(int64_t l) const;
  // Values of one MLA layer's latent cache row: [c_kv | k_pe] (576 for Kimi).
  int64_t latent_dim() const { return kv_lora_rank + qk_rope_dim; }
  int64_t num_full_layers() const;
  int64_t num_linear_layers() const;
  int64_t conv_dim() const { return 2 * lin_num_k_heads * lin_k_dim + lin_num_v_heads * lin_v_dim; }
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
// Archs whose FFN is a sparse MoE: spec §4.3, or §7.4 for the latent archs.
inline bool IsMoeArch(Arch a) { return a != Arch::kQwen3_5 && a != Arch::kQwen3; }
// Archs whose GGUF stores GDN value heads tiled (the Qwen3.5 converter's
// permutation, spec §2.4); Qwen3-Next keeps them grouped.
inline bool GgufTilesVHeads(Arch a) { return a == Arch::kQwen3_5 || a == Arch::kQwen3_5Moe; }


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
