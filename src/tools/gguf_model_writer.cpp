#include "tools/gguf_model_writer.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "kinds/gated_deltanet/gdn_roles.h"
#include "kinds/latent_attention/latent_tensors.h"
#include "model/encode.h"
#include "model/layer_kinds.h"
#include "tools/gguf_writer.h"
#include "tools/random_model.h"

namespace lineage::model {
namespace {

using namespace kinds::gated_deltanet;
using kinds::latent_attention::kMlaKB;
using kinds::latent_attention::kMlaVB;

// llama.cpp's general.file_type values (LlamaFileType).
uint32_t FileType(DType t) {
  switch (t) {
    case DType::kF16: return 1;
    case DType::kQ8_0: return 7;
    case DType::kBF16: return 32;
    default: return 0;
  }
}

// The V-head permutation of spec §2.4: a Qwen3.5 GGUF stores value heads
// tiled (head j*H_k + g) where HF stores them grouped (head g*r + j).
struct VHeadPermutation {
  int64_t num_k_heads = 1, ratio = 1;
  bool active() const { return ratio > 1; }
  int64_t GroupedFromTiled(int64_t h) const { return (h % num_k_heads) * ratio + h / num_k_heads; }
  // Index within a run of heads of `head_size` entries starting at `offset`.
  int64_t Map(int64_t i, int64_t offset, int64_t head_size) const {
    if (!active() || i < offset) return i;
    const int64_t h = (i - offset) / head_size, within = (i - offset) % head_size;
    return offset + GroupedFromTiled(h) * head_size + within;
  }
};

// Which dimension of an HF tensor the permutation applies to, and how.
struct Reorder {
  bool rows = false, cols = false;
  int64_t offset = 0, head_size = 1;
};

Reorder ReorderFor(const ModelConfig& c, Role role) {
  const int64_t key_dim = c.delta.k_heads * c.delta.k_dim;
  switch (role) {
    case kLinQkv: case kLinConv: return {true, false, 2 * key_dim, c.delta.v_dim};
    case kLinZ: return {true, false, 0, c.delta.v_dim};
    case kLinB: case kLinA: return {true, false, 0, 1};
    case kLinDtBias: case kLinALog: return {false, true, 0, 1};
    case kLinOut: return {false, true, 0, c.delta.v_dim};
    default: return {};
  }
}

// Qwen3-Next's converter cuts attn_qkv ([q_all | k_all | v_all], V still
// grouped) and attn_gate (z) out of HF in_proj_qkvz, whose rows are grouped
// per key head as [q_g | k_g | v_g (r d_v) | z_g (r d_v)] (spec §2.1, §5.2):
// the in_proj_qkvz row GGUF row `r` of `role` comes from.
int64_t QkvzRow(const ModelConfig& c, Role role, int64_t r) {
  const int64_t dk = c.delta.k_dim, dv = c.delta.v_dim, key_dim = c.delta.k_heads * dk;
  const int64_t ratio = c.delta.v_heads / c.delta.k_heads, group = 2 * dk + 2 * ratio * dv;
  if (role == kLinZ) return (r / dv / ratio) * group + 2 * dk + ratio * dv + (r / dv % ratio) * dv + r % dv;
  if (r < 2 * key_dim) return (r % key_dim / dk) * group + (r < key_dim ? 0 : dk) + r % dk;
  const int64_t v = r - 2 * key_dim;
  return (v / dv / ratio) * group + 2 * dk + (v / dv % ratio) * dv + v % dv;
}

// Kimi's attn_k_b [nh, L, dn] and attn_v_b [nh, dv, L] are cut from HF
// kv_b_proj [nh (dn + dv), L] (per head [k_nope rows | v rows]), k_b
// transposed per head (spec §7.3): the kv_b_proj element GGUF element
// (row r, column i) comes from.
int64_t KvBElement(const ModelConfig& c, Role role, int64_t r, int64_t i) {
  const int64_t dn = c.mla.qk_nope_dim, dv = c.mla.v_head_dim, L = c.mla.kv_lora_rank;
  if (role == kMlaKB) {  // r = h L + l, i = j
    const int64_t h = r / L, l = r % L;
    return (h * (dn + dv) + i) * L + l;
  }
  const int64_t h = r / dv, j = r % dv;  // kMlaVB: r = h dv + j, i = l
  return (h * (dn + dv) + dn + j) * L + i;
}

// Streams one converted tensor: each GGUF row is built from the HF row it
// comes from (as the HF file stores it), reordered, transformed, encoded.
Status ProduceTensor(const ModelConfig& c, const PlannedTensor& p, uint64_t seed, DType hf_dtype, DType out_dtype,
                     FileSink& sink) {
  const int64_t cols = p.hf_shape.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < p.hf_shape.size(); ++i) rows *= p.hf_shape[i];
  VHeadPermutation perm;
  if (GgufTilesVHeads(c.arch) && c.delta.k_heads > 0) {
    perm.num_k_heads = c.delta.k_heads;
    perm.ratio = c.delta.v_heads / c.delta.k_heads;
  }
  const Reorder re = ReorderFor(c, p.role);
  const DType source = HfStoredDType(p, hf_dtype);
  std::vector<float> src(static_cast<size_t>(cols)), row(static_cast<size_t>(cols));
  std::vector<uint8_t> bytes(static_cast<size_t>(RowBytes(out_dtype, cols)));
  if (p.role == kMlaKB || p.role == kMlaVB) {
    const int64_t out_cols = p.gguf_shape.back(), out_rows = p.gguf_shape[0] * p.gguf_shape[1];
    row.resize(static_cast<size_t>(out_cols));
    bytes.resize(static_cast<size_t>(RowBytes(out_dtype, out_cols)));
    for (int64_t r = 0; r < out_rows; ++r) {
      for (int64_t i = 0; i < out_cols; ++i) {
        FillRandom(c.arch, p, seed, KvBElement(c, p.role, r, i), 1, &row[i]);
        RoundTrip(&row[i], 1, source);
      }
      EncodeRow(row.data(), out_cols, out_dtype, bytes.data());
      LINEAGE_RETURN_IF_ERROR(sink.Write(bytes.data(), bytes.size()));
    }
    return Status::Ok();
  }
  for (int64_t r = 0; r < rows; ++r) {
    int64_t src_row = re.rows ? perm.Map(r, re.offset, re.head_size) : r;
    if (c.arch == Arch::kQwen3Next && (p.role == kLinQkv || p.role == kLinZ)) src_row = QkvzRow(c, p.role, r);
    FillRandom(c.arch, p, seed, src_row * cols, cols, src.data());
    RoundTrip(src.data(), cols, source);
    for (int64_t i = 0; i < cols; ++i) row[i] = src[re.cols ? perm.Map(i, re.offset, re.head_size) : i];
    if (IsZeroCentredNorm(p, c.arch))
      for (float& w : row) w = 1.0f + w;
    if (p.values == Values::kALog)
      for (float& a : row) a = SsmAFromALog(a);
    EncodeRow(row.data(), cols, out_dtype, bytes.data());
    LINEAGE_RETURN_IF_ERROR(sink.Write(bytes.data(), bytes.size()));
  }
  return Status::Ok();
}

Result<int64_t> FullAttentionInterval(const ModelConfig& c) {
  if (c.num_full_layers() == 0) return InvalidArgument("a qwen35 model needs full-attention layers");
  int64_t interval = 0;
  for (int64_t i = 0; i < c.num_layers; ++i)
    if (!c.recurrent(i)) {
      interval = i + 1;
      break;
    }
  if (LayerKindsFromInterval(c.num_layers, interval) != LayerFlags(c))
    return InvalidArgument("layer kinds do not follow a full_attention_interval, which GGUF requires");
  return interval;
}

// The latent archs' layer kinds as llama.cpp's converters write them (spec
// §7.5; latent-attention §3.1, §3.3): Kimi Linear's per-layer
// head_count_kv array (also kda-dsa's; INT32 in K3's), a scalar 1 for
// glm-dsa and deepseek32; and K3's Block AttnRes. The widths are the
// kinds' keys.
void AddLatentKeys(GgufWriter& w, const std::string& a, const ModelConfig& c) {
  std::vector<uint32_t> kv_heads;
  for (int64_t l = 0; l < c.num_layers; ++l) kv_heads.push_back(c.recurrent(l) ? 0 : 1);
  if (c.arch == Arch::kKimiK3) {
    w.AddInt32Array(a + "attention.head_count_kv", std::vector<int32_t>(kv_heads.begin(), kv_heads.end()));
    w.AddUint32(a + "attn_res.block_size", static_cast<uint32_t>(c.attn_res_block));
  } else if (c.num_linear_layers() > 0 || c.arch == Arch::kKimiLinear) {
    w.AddUint32Array(a + "attention.head_count_kv", kv_heads);
  } else {
    w.AddUint32(a + "attention.head_count_kv", 1);
  }
  w.AddUint32(a + "vocab_size", static_cast<uint32_t>(c.vocab));
}

// The kinds' own keys (model/layer_kinds.h).
void AddKindKeys(GgufWriter& w, const std::string& a, const ModelConfig& c) {
  for (const KindConfig* k : KindConfigs()) {
    if (!k->gguf_keys) continue;
    for (const GgufKey& key : k->gguf_keys(c, a)) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, uint32_t>) w.AddUint32(key.key, v);
            else if constexpr (std::is_same_v<T, float>) w.AddFloat32(key.key, v);
            else if constexpr (std::is_same_v<T, bool>) w.AddBool(key.key, v);
            else if constexpr (std::is_same_v<T, std::string>) w.AddString(key.key, v);
            else w.AddBoolArray(key.key, v);
          },
          key.value);
    }
  }
}

void AddTokenizer(GgufWriter& w, const VocabData& v) {
  w.AddString("tokenizer.ggml.model", v.model);
  w.AddString("tokenizer.ggml.pre", v.pre);
  w.AddStringArray("tokenizer.ggml.tokens", v.tokens);
  std::vector<int32_t> types;
  for (TokenType t : v.token_types) types.push_back(static_cast<int32_t>(t));
  w.AddInt32Array("tokenizer.ggml.token_type", types);
  w.AddStringArray("tokenizer.ggml.merges", v.merges);
  if (v.eos_id >= 0) w.AddUint32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id));
  if (v.pad_id >= 0) w.AddUint32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(v.pad_id));
  if (v.bos_id >= 0) w.AddUint32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id));
  w.AddBool("tokenizer.ggml.add_bos_token", v.add_bos);
  if (!v.chat_template.empty()) w.AddString("tokenizer.chat_template", v.chat_template);
}

}  // namespace

DType GgufTensorDType(const PlannedTensor& p, DType dtype) {
  const bool is_weight = p.gguf_name.size() > 7 && p.gguf_name.compare(p.gguf_name.size() - 7, 7, ".weight") == 0;
  // gguf-py keeps the router (ffn_gate_inp) in f32 whatever the file type.
  if (p.hf_shape.size() <= 1 || IsSmall(p) || !is_weight || p.values == Values::kF32Matrix) return DType::kF32;
  if (dtype == DType::kQ8_0 && p.hf_shape.back() % 32 != 0) return DType::kF16;
  return dtype;
}

Status WriteGgufModel(const ModelSpec& spec, const VocabData& vocab, const WriteOptions& o, const std::string& path) {
  ModelConfig c = spec.config;
  // The GGUF layout's plan; each tensor's hf_name / hf_shape say which HF
  // tensor (as the HF file stores it) its values come from.
  c.format = FileFormat::kGguf;
  const std::string arch = GgufArchName(c.arch);
  const std::string a = arch + ".";
  GgufWriter w;
  w.AddString("general.architecture", arch);
  w.AddString("general.type", "model");
  w.AddString("general.name", "Lineage random " + spec.shape);
  w.AddUint32("general.quantization_version", 2);
  w.AddUint32("general.file_type", o.preset ? QuantPresetFileType(*o.preset) : FileType(o.dtype));
  w.AddUint32(a + "block_count", static_cast<uint32_t>(c.num_layers + c.mtp_layers));
  if (c.mtp_layers > 0) w.AddUint32(a + "nextn_predict_layers", static_cast<uint32_t>(c.mtp_layers));
  w.AddUint32(a + "context_length", static_cast<uint32_t>(c.context_length));
  w.AddUint32(a + "embedding_length", static_cast<uint32_t>(c.hidden));
  if (c.intermediate > 0) w.AddUint32(a + "feed_forward_length", static_cast<uint32_t>(c.intermediate));
  w.AddUint32(a + "attention.head_count", static_cast<uint32_t>(c.num_heads));
  w.AddFloat32(a + "rope.freq_base", static_cast<float>(c.rope_theta));
  w.AddFloat32(a + "attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_eps));
  if (c.latent()) {
    AddLatentKeys(w, a, c);
  } else {
    w.AddUint32(a + "attention.head_count_kv", static_cast<uint32_t>(c.num_kv_heads));
    w.AddUint32(a + "attention.key_length", static_cast<uint32_t>(c.head_dim));
    w.AddUint32(a + "attention.value_length", static_cast<uint32_t>(c.head_dim));
  }
  AddKindKeys(w, a, c);
  if (IsHybrid(c.arch)) {
    w.AddUint32(a + "rope.dimension_count", static_cast<uint32_t>(c.rope_dims));
    if (c.arch != Arch::kQwen3Next) {  // M-RoPE is Qwen3.5's; Qwen3-Next is plain NeoX
      std::vector<int32_t> sections(spec.mrope_sections.begin(), spec.mrope_sections.end());
      sections.resize(4, 0);
      w.AddInt32Array(a + "rope.dimension_sections", sections);
    }
    LINEAGE_ASSIGN_OR_RETURN(int64_t interval, FullAttentionInterval(c));
    w.AddUint32(a + "full_attention_interval", static_cast<uint32_t>(interval));
  }
  AddTokenizer(w, vocab);

  // The converter reads an HF checkpoint of the requested float type; for
  // q8_0 and the quantization presets it quantizes from f32 weights.
  const DType hf_dtype = o.preset || IsQuantized(o.dtype) ? DType::kF32 : o.dtype;
  for (const PlannedTensor& p : PlanTensors(c)) {
    const DType out = o.preset ? PresetTensorType(*o.preset, c, p) : GgufTensorDType(p, o.dtype);
    std::vector<int64_t> ne(p.gguf_shape.rbegin(), p.gguf_shape.rend());
    int64_t numel = 1;
    for (int64_t d : ne) numel *= d;
    const uint64_t seed = o.seed;
    w.AddTensor(p.gguf_name, ne, GgmlFromDType(out), static_cast<uint64_t>(RowBytes(out, numel)),
                [c, p, seed, hf_dtype, out](FileSink& sink) { return ProduceTensor(c, p, seed, hf_dtype, out, sink); });
  }
  return w.WriteFile(path);
}

}  // namespace lineage::model
