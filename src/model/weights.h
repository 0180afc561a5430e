// Weights: the tensors of a loaded model, bound by name and shape-checked.
//
// Large matrices are TensorViews into the memory-mapped file(s). Small
// vectors (norms, GDN A / dt_bias, conv kernels) are decoded once into owned
// fp32 arrays with every file convention already applied, so the forward
// pass never branches on the format:
//   - norm weights hold the effective scale: (1 + w) for zero-centred HF
//     qwen3_5 norms, the stored value for GGUF (already folded) and for the
//     GDN output norm and all qwen3 norms;
//   - ssm_a holds -exp(A_log) (GGUF stores it so; HF stores A_log);
//   - conv holds [conv_dim, K] in the file's channel order.
// V-head order is NOT normalised (it would copy large matrices); the forward
// pass reads ModelConfig::v_head_order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor_view.h"
#include "model/config.h"

namespace lineage::model {

// Which GDN input projection output a block of fused weight rows feeds.
enum class GdnInput { kQkv, kZ, kB, kA };

// A run of consecutive rows of a fused projection whose outputs are columns
// [col, col + w.rows()) of one GDN input.
struct GdnInputBlock {
  TensorView w;                   // [rows, H], a row slice of the fused tensor
  GdnInput input = GdnInput::kQkv;
  int64_t col = 0;
};

struct LinearAttentionWeights {   // Gated DeltaNet, spec §2
  // Separate projections (qwen3_5, qwen3_5_moe; the GGUF attn_qkv and
  // attn_gate of qwen3_next). Invalid views where the file fuses them.
  TensorView in_proj_qkv;         // [conv_dim, H]: rows [q (H_k d_k) | k (H_k d_k) | v (H_v d_v)]
  TensorView in_proj_z;           // [H_v d_v, H]
  TensorView in_proj_b;           // [H_v, H]
  TensorView in_proj_a;           // [H_v, H]
  // Qwen3-Next's fused projections, grouped per key head g (spec §2.1):
  TensorView in_proj_qkvz;        // HF: [2 key_dim + 2 value_dim, H], per g [q_g | k_g | v_g (r d_v) | z_g (r d_v)]
  TensorView in_proj_ba;          // [2 H_v, H], per g [b_g (r) | a_g (r)]
  // When not empty: every input projection as row blocks (the separate
  // views whole, the fused ones cut per group), so the forward pass runs
  // one list of Gemms whatever the file fused.
  std::vector<GdnInputBlock> in_blocks;
  std::vector<float> conv;        // [conv_dim, K]
  std::vector<float> dt_bias;     // [H_v]
  std::vector<float> ssm_a;       // [H_v], = -exp(A_log)
  std::vector<float> norm;        // [d_v], plain weight (never 1 + w)
  TensorView out_proj;            // [H, H_v d_v]
};

struct FullAttentionWeights {     // spec §3 (qwen3_5) and §11 (qwen3)
  TensorView q_proj;              // qwen3_5: [2 n_h hd, H] as [q_0|gate_0|q_1|gate_1|...]; qwen3: [n_h hd, H]
  TensorView k_proj;              // [n_kv hd, H]
  TensorView v_proj;              // [n_kv hd, H]
  TensorView o_proj;              // [H, n_h hd]
  std::vector<float> q_norm;      // [hd], effective scale
  std::vector<float> k_norm;      // [hd], effective scale
};

// Kimi Delta Attention (spec §7.2); nh heads of d channels, inner = nh d.
struct KdaWeights {
  TensorView q_proj, k_proj, v_proj;  // [inner, H] each
  std::vector<float> conv;            // [3 inner, K]: q, k, v channels in that order
  TensorView f_a;                     // [d, H]
  TensorView f_b;                     // [inner, d]
  TensorView b_proj;                  // [nh, H]
  std::vector<float> ssm_a;           // [nh], = -exp(A_log)
  std::vector<float> dt_bias;         // [inner]
  TensorView g_a;                     // [d, H]
  TensorView g_b;                     // [inner, d]
  TensorView g_full;                  // [inner, H]: K3's full-rank output gate, in place of g_b g_a
  std::vector<float> norm;            // [d], plain weight
  TensorView o_proj;                  // [H, inner]
};

// The lightning indexer of a full sparse layer (spec latent-attention §1.2):
// Hi heads of D; q_lora = ModelConfig::q_lora_rank.
struct IndexerWeights {
  TensorView q_b;                     // [Hi D, q_lora]: per head [rope | nope], from the normed q latent
  TensorView k;                       // [D, H]
  std::vector<float> k_norm;          // [D] LayerNorm weight
  std::vector<float> k_norm_bias;     // [D] LayerNorm bias
  TensorView weights_proj;            // [Hi, H]: the per-head score weights
  bool valid() const { return k.valid(); }
};

// Latent attention (spec §7.3) with nh heads; L = kv_lora_rank.
struct MlaWeights {
  TensorView q_proj;                  // [nh (dn + dr), H]: per head [q_nope | q_pe]; invalid with a q LoRA
  TensorView q_a;                     // [q_lora, H]  (q LoRA: q = q_b rmsnorm(q_a xn))
  std::vector<float> q_a_norm;        // [q_lora]
  TensorView q_b;                     // [nh (dn + dr), q_lora]
  IndexerWeights indexer;             // full layers of a sparse model
  TensorView out_gate;                // [nh dv, H]: K3's output gate, u *= sigmoid(out_gate xn)
  TensorView kv_a;                    // [L + dr, H]: [c_kv | k_pe]
  std::vector<float> kv_a_norm;       // [L]
  // Per head, whatever the file's cut (HF kv_b_proj or GGUF attn_k_b /
  // attn_v_b): k_b_t[h] = W_k,h^T [L, dn] (absorbs q_nope into the latent),
  // v_b[h] = W_v,h [dv, L]. Views of the file, or of `owned` where the file
  // stores W_k,h untransposed (HF).
  std::vector<TensorView> k_b_t;
  std::vector<TensorView> v_b;
  std::shared_ptr<const std::vector<float>> owned;
  TensorView o_proj;                  // [H, nh dv]
};

// Sparse MoE FFN (spec §4.3), every routed expert a SwiGLU of width I_e.
// Per-expert views are slices of the file's tensors, whatever their layout.
struct MoeWeights {
  TensorView router;                   // [E, H]
  std::vector<TensorView> gate;        // E x [I_e, H]
  std::vector<TensorView> up;          // E x [I_e, H]
  std::vector<TensorView> down;        // E x [H, I_e]
  TensorView shared_gate;              // [I_s, H]
  TensorView shared_up;                // [I_s, H]
  TensorView shared_down;              // [H, I_s]
  std::vector<float> shared_gate_inp;  // [H]: the shared expert's scale is sigmoid(x . this); empty: no gate (kimi)
  std::vector<float> score_bias;       // [E]: kimi's e_score_correction_bias (selection only); else empty
  // K3's latent MoE: the routed experts read latent_down xn [X] and their
  // weighted sum goes through rmsnorm(.) latent_norm, then latent_up.
  TensorView latent_down;              // [X, H]
  std::vector<float> latent_norm;      // [X]; empty: no norm
  TensorView latent_up;                // [H, X]
};

struct LayerWeights {
  LayerKind kind = LayerKind::kFullAttention;
  std::vector<float> input_norm;  // [H], effective scale
  std::vector<float> post_norm;   // [H], effective scale (post_attention_layernorm)
  LinearAttentionWeights linear;  // valid when kind == kLinearAttention
  FullAttentionWeights full;      // valid when kind == kFullAttention
  KdaWeights kda;                 // kimi_linear, kind == kLinearAttention
  MlaWeights mla;                 // kimi_linear, kind == kFullAttention
  TensorView gate_proj;           // [I, H]   (dense FFN; invalid for MoE models)
  TensorView up_proj;             // [I, H]
  TensorView down_proj;           // [H, I]
  MoeWeights moe;                 // valid when config.moe_layer(l)
  std::vector<float> attn_res_score;  // [H]: Block AttnRes' mix before the mixer (K3); else empty
  std::vector<float> ffn_res_score;   // [H]: ... before the FFN
};

// The multi-token-prediction (NextN) block: from the trunk's final-normed
// state h of one position and the embedding of the next token it drafts
// the token after, x = eh_proj [enorm(embed) | hnorm(h)], one full layer,
// then head_norm and the trunk's head (spec hybrid-qwen §5.2).
struct MtpWeights {
  LayerWeights layer;             // attention (dense latent on the latent archs) and the FFN
  TensorView eh_proj;             // [H, 2H]
  std::vector<float> enorm;       // [H], effective scale
  std::vector<float> hnorm;       // [H]
  std::vector<float> head_norm;   // [H]
  bool valid() const { return eh_proj.valid(); }
};

struct Weights {
  TensorView embed;               // [V, H]
  std::vector<LayerWeights> layers;
  MtpWeights mtp;                 // valid when config.mtp() and the file holds the whole block
  std::string mtp_unavailable;    // why not, when the file declares a block it does not hold whole
  std::vector<float> final_norm;  // [H], effective scale
  std::vector<float> output_res_score;  // [H]: Block AttnRes' mix before the final norm (K3); else empty
  TensorView lm_head;             // [V, H]; the same view as `embed` when tied
};

// A model ready to run: configuration, bound weights and the owners that
// keep the weight bytes alive (the mapped files of a loaded model, or the
// heap buffers of an in-memory random model). Immutable after load; safe to
// share between threads.
struct Model {
  ModelConfig config;
  Weights weights;
  std::vector<std::shared_ptr<MappedFile>> files;
  std::vector<std::shared_ptr<const void>> buffers;  // in-memory tensor bytes; empty for files
};

}  // namespace lineage::model
