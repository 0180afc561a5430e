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
// pass reads ModelConfig::delta.v_head_order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor_view.h"
#include "kinds/attention/weights.h"
#include "kinds/gated_deltanet/weights.h"
#include "kinds/kda/weights.h"
#include "kinds/latent_attention/weights.h"
#include "kinds/moe/weights.h"
#include "model/config.h"

namespace lineage::model {

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
