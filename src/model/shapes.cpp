#include "model/shapes.h"

#include <algorithm>

namespace lineage::model {
namespace {

ModelConfig Qwen35Base() {
  ModelConfig c;
  c.arch = Arch::kQwen3_5;
  c.rms_eps = 1e-6;
  c.tied_embeddings = true;
  c.attn_output_gate = true;
  c.rope_theta = 1e7;
  c.delta.conv_kernel = 4;
  c.context_length = 262144;
  return c;
}

ModelConfig Qwen3Base() {
  ModelConfig c;
  c.arch = Arch::kQwen3;
  c.rms_eps = 1e-6;
  c.tied_embeddings = true;
  c.attn_output_gate = false;
  c.rope_theta = 1e6;
  c.context_length = 40960;
  return c;
}

// The attention and GDN dimensions the MoE models share (spec §1.2).
void MoeTrunk(ModelConfig& c) {
  c.hidden = 2048;
  c.num_heads = 16;
  c.num_kv_heads = 2;
  c.head_dim = 256;
  c.rope_dims = 64;
  c.delta.k_heads = 16;
  c.delta.v_heads = 32;
  c.delta.k_dim = 128;
  c.delta.v_dim = 128;
  c.experts.width = 512;
  c.experts.shared_width = 512;
}

// The tiny hybrid trunk every tiny shape but qwen3's shares (shapes.h).
void TinyHybridTrunk(ModelConfig& c) {
  c.hidden = 128;
  c.num_layers = 8;
  c.vocab = 1024;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  c.rope_dims = 16;
  c.delta.k_heads = 2;
  c.delta.v_heads = 4;
  c.delta.k_dim = 32;
  c.delta.v_dim = 32;
}

// The tiny shape of both MoE archs: the tiny trunk, 8 experts of 64.
void TinyMoe(ModelConfig& c) {
  TinyHybridTrunk(c);
  c.experts.count = 8;
  c.experts.width = 64;
  c.experts.shared_width = 96;
}

Result<ModelSpec> LookupMoeShape(Arch arch, std::string_view shape) {
  ModelSpec s;
  s.shape = std::string(shape);
  ModelConfig& c = s.config;
  c = Qwen35Base();
  c.arch = arch;
  c.tied_embeddings = false;
  s.mrope_sections = {11, 11, 10};
  const bool next = arch == Arch::kQwen3Next;
  const char* real = next ? "qwen3-next-80b-a3b" : "qwen3.5-35b-a3b";
  if (shape == "tiny") {
    TinyMoe(c);
    c.experts.per_token = next ? 3 : 2;
    c.intermediate = next ? 256 : 0;
    s.mrope_sections = {3, 3, 2};
  } else if (shape == real) {
    MoeTrunk(c);
    if (next) {
      c.num_layers = 48;
      c.vocab = 151936;
      c.intermediate = 5120;  // in config.json, unused: every layer is MoE
      c.experts.count = 512;
      c.experts.per_token = 10;
    } else {
      c.num_layers = 40;
      c.vocab = 248320;
      c.experts.count = 256;
      c.experts.per_token = 8;
    }
  } else {
    return NotFound("unknown shape '" + std::string(shape) + "' for " + ArchName(arch) + " (known: tiny, " + real +
                    ")");
  }
  c.layers = StackLayers(c.arch, LayerKindsFromInterval(c.num_layers, 4));
  return s;
}

// Kimi Linear (spec §7.1): KDA layers, MLA at 1-indexed layers 4, 8, ... and
// the last; the first layer's FFN dense. tiny keeps the 3:1 pattern over 8
// layers with every width small and every head count above 1.
Result<ModelSpec> LookupKimiShape(std::string_view shape) {
  ModelSpec s;
  s.shape = std::string(shape);
  ModelConfig& c = s.config;
  c.arch = Arch::kKimiLinear;
  c.rms_eps = 1e-5;
  c.tied_embeddings = false;
  c.rope_theta = 1e4;  // in config.json, unused: MLA here is NoPE
  c.context_length = 1048576;
  c.num_kv_heads = 1;
  if (shape == "tiny") {
    c.hidden = 128;
    c.num_layers = 8;
    c.vocab = 1024;
    c.intermediate = 256;
    c.num_heads = 4;
    c.mla = {.kv_lora_rank = 32, .qk_nope_dim = 32, .qk_rope_dim = 16, .v_head_dim = 32};
    c.delta = {.k_heads = 4, .v_heads = 4, .k_dim = 32, .v_dim = 32};
    c.experts = {.count = 8, .per_token = 2, .width = 64, .shared_width = 64};
  } else if (shape == "kimi-linear-48b-a3b") {
    c.hidden = 2304;
    c.num_layers = 27;
    c.vocab = 163840;
    c.intermediate = 9216;
    c.num_heads = 32;
    c.mla = {.kv_lora_rank = 512, .qk_nope_dim = 128, .qk_rope_dim = 64, .v_head_dim = 128};
    c.delta = {.k_heads = 32, .v_heads = 32, .k_dim = 128, .v_dim = 128};
    c.experts = {.count = 256, .per_token = 8, .width = 1024, .shared_width = 1024};
  } else {
    return NotFound("unknown shape '" + std::string(shape) + "' for kimi_linear (known: tiny, kimi-linear-48b-a3b)");
  }
  c.experts.leading_dense_layers = 1;
  c.experts.routed_scaling = 2.446;
  c.head_dim = c.mla.qk_nope_dim + c.mla.qk_rope_dim;
  c.rope_dims = c.mla.qk_rope_dim;
  c.layers = StackLayers(c.arch, LayerKindsFromInterval(c.num_layers, 4));
  if (shape != "tiny") c.layers.back().mixer = KindsOf(c.arch).attention;
  return s;
}

// GLM-5's latent row, indexer, vocabulary and constants (spec
// latent-attention §3.1), which glm-5.3-flash shares.
void Glm5Latent(ModelConfig& c) {
  c.vocab = 154880;
  c.mla.kv_lora_rank = 512;
  c.mla.qk_nope_dim = 192;
  c.mla.qk_rope_dim = 64;
  c.mla.v_head_dim = 256;
  c.indexer.heads = 32;
  c.indexer.dim = 128;
  c.indexer.top_k = 2048;
  c.rope_theta = 1e6;
  c.rms_eps = 1e-5;
}

// Sparse latent attention (spec latent-attention §3.1): glm-dsa (GLM-5,
// GLM-5.2), deepseek32 (DeepSeek-V3.2, without its YaRN scaling) and the
// design's hybrid kda-dsa (glm-5.3-flash: Kimi Linear's KDA layers with
// sparse latent layers, shapes.h). tiny keeps every pitfall cheap: q-LoRA,
// rotary latent dims, an indexer of D = 64 (the Hadamard size) whose top_k
// of 16 drops keys within a short prompt, shared indexer layers (glm-dsa,
// kda-dsa), grouped routing (deepseek32), a dense first layer.
Result<ModelSpec> LookupSparseShape(Arch arch, std::string_view shape) {
  ModelSpec s;
  s.shape = std::string(shape);
  ModelConfig& c = s.config;
  c.arch = arch;
  c.tied_embeddings = false;
  c.mla.rope = true;
  c.num_kv_heads = 1;
  c.experts.leading_dense_layers = arch == Arch::kKdaDsa ? 1 : 3;
  c.delta.conv_kernel = 4;
  const bool tiny = shape == "tiny";
  if (tiny) {
    c.hidden = 128;
    c.num_layers = arch == Arch::kKdaDsa ? 8 : 6;
    c.vocab = 1024;
    c.intermediate = 256;
    c.num_heads = 4;
    c.mla.q_lora_rank = 64;
    c.mla.kv_lora_rank = 48;  // latent row 48 + 16 = 64: the attention tiles' multiple of 16
    c.mla.qk_nope_dim = 32;
    c.mla.qk_rope_dim = 16;
    c.mla.v_head_dim = 32;
    c.indexer.heads = 8;
    c.indexer.dim = 64;
    c.indexer.top_k = 16;
    c.experts.count = 8;
    c.experts.per_token = 2;
    c.experts.width = 64;
    c.experts.shared_width = 64;
    c.experts.leading_dense_layers = 1;
    c.experts.routed_scaling = 2.5;
    c.rope_theta = 1e4;
    c.rms_eps = 1e-5;
    c.context_length = 32768;
    // KDA heads other than the latent heads: kda-dsa states them apart.
    c.delta.k_heads = c.delta.v_heads = 2;
    c.delta.k_dim = c.delta.v_dim = 32;
    if (arch == Arch::kDeepseek32) {
      c.experts.groups = 4;
      c.experts.groups_used = 2;
      // YaRN as DeepSeek-V3.2's, over a short original context so that the
      // ramp falls inside the 8 rotary pairs, with a gain other than 1.
      c.mla.yarn_factor = 4;
      c.mla.yarn_original_context = 32;
      c.mla.yarn_mscale_all_dim = 0.7;
    }
  } else if (arch == Arch::kGlmDsa && (shape == "glm-5" || shape == "glm-5.2")) {
    Glm5Latent(c);
    c.hidden = 6144;
    c.num_layers = 78;
    c.intermediate = 12288;
    c.num_heads = 64;
    c.mla.q_lora_rank = 2048;
    c.experts.count = 256;
    c.experts.per_token = 8;
    c.experts.width = 2048;
    c.experts.shared_width = 2048;
    c.experts.routed_scaling = 2.5;
    c.context_length = shape == "glm-5" ? 202752 : 1048576;
  } else if (arch == Arch::kDeepseek32 && shape == "deepseek-v3.2") {
    c.hidden = 7168;
    c.num_layers = 61;
    c.vocab = 129280;
    c.intermediate = 18432;
    c.num_heads = 128;
    c.mla.q_lora_rank = 1536;
    c.mla.kv_lora_rank = 512;
    c.mla.qk_nope_dim = 128;
    c.mla.qk_rope_dim = 64;
    c.mla.v_head_dim = 128;
    c.indexer.heads = 64;
    c.indexer.dim = 128;
    c.indexer.top_k = 2048;
    c.experts.count = 256;
    c.experts.per_token = 8;
    c.experts.width = 2048;
    c.experts.shared_width = 2048;
    c.experts.groups = 8;
    c.experts.groups_used = 4;
    c.experts.routed_scaling = 2.5;
    c.rope_theta = 1e4;
    c.rms_eps = 1e-6;
    c.context_length = 163840;
    c.mla.yarn_factor = 40;
    c.mla.yarn_original_context = 4096;
    c.mla.yarn_mscale_all_dim = 1;
  } else if (arch == Arch::kKdaDsa && shape == "glm-5.3-flash") {
    // The model of seeds/000: 34 KDA layers of 64 heads x 128 (a 143 MB
    // state) and 11 sparse latent layers, a DeepSeek MoE; the other widths
    // are GLM-4.7-Flash's (hidden 2048, 20 latent heads, q_lora 768,
    // 64 experts of 1536, top 4, one shared) with GLM-5's indexer.
    Glm5Latent(c);
    c.hidden = 2048;
    c.num_layers = 45;
    c.intermediate = 10240;
    c.num_heads = 20;
    c.mla.q_lora_rank = 768;
    c.experts.count = 64;
    c.experts.per_token = 4;
    c.experts.width = 1536;
    c.experts.shared_width = 1536;
    c.experts.routed_scaling = 1.8;
    c.context_length = 202752;
    c.delta.k_heads = c.delta.v_heads = 64;
    c.delta.k_dim = c.delta.v_dim = 128;
  } else {
    const char* known = arch == Arch::kGlmDsa      ? "tiny, glm-5, glm-5.2"
                        : arch == Arch::kDeepseek32 ? "tiny, deepseek-v3.2"
                                                    : "tiny, glm-5.3-flash";
    return NotFound("unknown shape '" + std::string(shape) + "' for " + ArchName(arch) + " (known: " + known + ")");
  }
  c.head_dim = c.mla.qk_nope_dim + c.mla.qk_rope_dim;
  c.rope_dims = c.mla.qk_rope_dim;
  SetIndexerConventions(&c);
  if (arch == Arch::kKdaDsa) {
    // KDA layers, a latent layer every fourth (the last KDA): 11 of 45 for
    // glm-5.3-flash, 2 of 8 for tiny; shared indexer layers above the first.
    c.layers = StackLayers(c.arch, LayerKindsFromInterval(c.num_layers, 4));
    c.indexer.full.assign(static_cast<size_t>(c.num_layers), true);
    if (tiny) c.indexer.full[7] = false;
  } else {
    c.layers = AttentionLayers(c.arch, c.num_layers);
    if (tiny && arch == Arch::kGlmDsa) c.indexer.full = {true, true, false, false, true, false};
    if (shape == "glm-5.2") c.indexer.full = Glm52IndexerTypes(c.num_layers);
  }
  if (arch != Arch::kKdaDsa) c.delta.k_heads = c.delta.v_heads = c.delta.k_dim = c.delta.v_dim = 0;
  return s;
}

// Kimi K3 (spec latent-attention §2, §3.3): Kimi Linear's skeleton, the
// MLA layers at 1-indexed 4, 8, ... and the last. tiny follows the oracle
// file tiny-kimi-k3.gguf at a hidden of 128.
Result<ModelSpec> LookupKimiK3Shape(std::string_view shape) {
  ModelSpec s;
  s.shape = std::string(shape);
  ModelConfig& c = s.config;
  c.arch = Arch::kKimiK3;
  c.rms_eps = 1e-5;
  c.tied_embeddings = false;
  c.rope_theta = 1e4;  // unused: K3's MLA is NoPE
  c.num_kv_heads = 1;
  c.situ = {.beta = 4.0, .linear_beta = 25.0};
  if (shape == "tiny") {
    c.hidden = 128;
    c.num_layers = 8;
    c.vocab = 1024;
    c.intermediate = 192;
    c.num_heads = 4;
    c.mla = {.kv_lora_rank = 32, .qk_nope_dim = 32, .qk_rope_dim = 16, .v_head_dim = 32};
    c.delta = {.k_dim = 32, .v_dim = 32};
    c.experts = {.count = 8, .per_token = 2, .width = 64, .shared_width = 64, .routed_scaling = 2.446, .latent = 64};
    c.attn_res_block = 3;
    c.context_length = 32768;
  } else if (shape == "kimi-k3") {
    c.hidden = 7168;
    c.num_layers = 93;
    c.vocab = 163840;
    c.intermediate = 33792;
    c.num_heads = 96;
    c.mla = {.kv_lora_rank = 512, .qk_nope_dim = 128, .qk_rope_dim = 64, .v_head_dim = 128, .q_lora_rank = 1536};
    c.delta = {.k_dim = 128, .v_dim = 128};
    c.experts = {.count = 896, .per_token = 16, .width = 3072, .shared_width = 2 * 3072, .latent = 3584};
    c.attn_res_block = 12;
    c.context_length = 1048576;
  } else {
    return NotFound("unknown shape '" + std::string(shape) + "' for kimi_k3 (known: tiny, kimi-k3)");
  }
  c.delta.k_heads = c.delta.v_heads = c.num_heads;  // KDA heads = MLA heads
  c.delta.gate_lower_bound = -5.0;
  c.experts.leading_dense_layers = 1;
  c.head_dim = c.mla.qk_nope_dim + c.mla.qk_rope_dim;
  c.rope_dims = c.mla.qk_rope_dim;
  c.layers = StackLayers(c.arch, LayerKindsFromInterval(c.num_layers, 4));
  if (shape != "tiny") c.layers.back().mixer = KindsOf(c.arch).attention;
  return s;
}

}  // namespace

std::vector<LayerKind> LayerKindsFromInterval(int64_t num_layers, int64_t interval) {
  std::vector<LayerKind> kinds(static_cast<size_t>(num_layers), LayerKind::kLinearAttention);
  for (int64_t i = 0; i < num_layers; ++i)
    if (interval > 0 && (i + 1) % interval == 0) kinds[i] = LayerKind::kFullAttention;
  return kinds;
}

Result<Arch> ParseArch(std::string_view name) {
  for (Arch a : kAllArchs)
    if (name == ArchName(a)) return a;
  return InvalidArgument("unknown architecture '" + std::string(name) + "' (known: " + ArchNameList() + ")");
}

Result<ModelSpec> CutLayers(ModelSpec spec, int64_t num_layers) {
  ModelConfig& c = spec.config;
  if (num_layers <= 0 || num_layers > c.num_layers)
    return InvalidArgument("--layers " + std::to_string(num_layers) + " is outside [1, " +
                           std::to_string(c.num_layers) + "] for shape " + spec.shape);
  c.num_layers = num_layers;
  c.layers.resize(static_cast<size_t>(num_layers));
  c.attn_res_block = std::min(c.attn_res_block, num_layers);
  if (!c.indexer.full.empty()) c.indexer.full.resize(static_cast<size_t>(num_layers));
  c.experts.leading_dense_layers = std::min(c.experts.leading_dense_layers, num_layers);
  if ((IsHybrid(c.arch) || c.latent()) && c.num_full_layers() == 0)
    return InvalidArgument("--layers " + std::to_string(num_layers) +
                           " leaves no full-attention layer (the first is layer 4)");
  spec.shape += "-" + std::to_string(num_layers) + "l";
  return spec;
}

namespace {

Result<ModelSpec> LookupArchShape(Arch arch, std::string_view shape, int64_t vocab_override) {
  if (arch == Arch::kGlmDsa || arch == Arch::kDeepseek32 || arch == Arch::kKdaDsa) {
    LINEAGE_ASSIGN_OR_RETURN(ModelSpec sparse, LookupSparseShape(arch, shape));
    if (vocab_override > 0) sparse.config.vocab = vocab_override;
    return sparse;
  }
  if (arch == Arch::kKimiK3) {
    LINEAGE_ASSIGN_OR_RETURN(ModelSpec k3, LookupKimiK3Shape(shape));
    if (vocab_override > 0) k3.config.vocab = vocab_override;
    return k3;
  }
  if (arch == Arch::kKimiLinear) {
    LINEAGE_ASSIGN_OR_RETURN(ModelSpec kimi, LookupKimiShape(shape));
    if (vocab_override > 0) kimi.config.vocab = vocab_override;
    return kimi;
  }
  if (arch == Arch::kQwen3_5Moe || arch == Arch::kQwen3Next) {
    LINEAGE_ASSIGN_OR_RETURN(ModelSpec moe, LookupMoeShape(arch, shape));
    if (vocab_override > 0) moe.config.vocab = vocab_override;
    return moe;
  }
  ModelSpec s;
  s.shape = std::string(shape);
  ModelConfig& c = s.config;
  if (arch == Arch::kQwen3_5) {
    c = Qwen35Base();
    if (shape == "tiny") {
      TinyHybridTrunk(c);
      c.intermediate = 256;
      s.mrope_sections = {3, 3, 2};
    } else if (shape == "qwen3.5-0.8b") {
      c.hidden = 1024;
      c.num_layers = 24;
      c.intermediate = 3584;
      c.vocab = 248320;
      c.num_heads = 8;
      c.num_kv_heads = 2;
      c.head_dim = 256;
      c.rope_dims = 64;
      c.delta.k_heads = 16;
      c.delta.v_heads = 16;
      c.delta.k_dim = 128;
      c.delta.v_dim = 128;
      s.mrope_sections = {11, 11, 10};
    } else if (shape == "qwen3-0.6b") {
      return InvalidArgument("shape 'qwen3-0.6b' belongs to arch qwen3, not qwen3_5");
    } else {
      return NotFound("unknown shape '" + std::string(shape) + "' for qwen3_5 (known: tiny, qwen3.5-0.8b)");
    }
    c.layers = StackLayers(c.arch, LayerKindsFromInterval(c.num_layers, 4));
  } else {
    c = Qwen3Base();
    if (shape == "tiny") {
      c.hidden = 128;
      c.num_layers = 4;
      c.intermediate = 256;
      c.vocab = 1024;
      c.num_heads = 4;
      c.num_kv_heads = 2;
      c.head_dim = 32;
    } else if (shape == "qwen3-0.6b") {
      c.hidden = 1024;
      c.num_layers = 28;
      c.intermediate = 3072;
      c.vocab = 151936;
      c.num_heads = 16;
      c.num_kv_heads = 8;
      c.head_dim = 128;
    } else if (shape == "qwen3.5-0.8b") {
      return InvalidArgument("shape 'qwen3.5-0.8b' belongs to arch qwen3_5, not qwen3");
    } else {
      return NotFound("unknown shape '" + std::string(shape) + "' for qwen3 (known: tiny, qwen3-0.6b)");
    }
    c.rope_dims = c.head_dim;
    c.layers = AttentionLayers(c.arch, c.num_layers);
  }
  if (vocab_override > 0) c.vocab = vocab_override;
  return s;
}

}  // namespace

// The shape's layers as its kinds' fields refine them (layer_kinds.h).
Result<ModelSpec> LookupShape(Arch arch, std::string_view shape, int64_t vocab_override) {
  LINEAGE_ASSIGN_OR_RETURN(ModelSpec spec, LookupArchShape(arch, shape, vocab_override));
  RefineLayers(&spec.config);
  return spec;
}

std::vector<bool> Glm52IndexerTypes(int64_t num_layers) {
  std::vector<bool> full(static_cast<size_t>(num_layers));
  for (int64_t l = 0; l < num_layers; ++l) full[l] = l < 3 || (l >= 6 && (l - 6) % 4 == 0);
  return full;
}

}  // namespace lineage::model
