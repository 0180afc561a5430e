// Layer kinds (DESIGN.md §4; docs/layer-kinds.md): every layer of a model
// is a (mixer, feed-forward) pair, and each kind lives in its own folder
// under src/kinds/, registered by one line of src/kinds/kinds.def. What the
// model library needs of a kind is its spec here: its name, whether it keeps
// a fixed-size recurrent state or per-token rows in the KV pages and how
// many of each, its tensors (names in both layouts) and how a found tensor
// binds into the layer's weights. Its forward and step (engine/layer_table.h)
// and its plain reference (tools/reference_math.h) are in the same folder
// (docs/layer-kinds.md).
//
// A model's config is the list of its layers' pairs (ModelConfig::layers).
// An architecture's reader makes it from the file's per-layer facts (which
// layers are recurrent) and the kinds the architecture's recurrent and
// attention layers and feed-forwards are (ArchKinds); a kind's own reader
// refines it where the kind's fields decide (the lightning indexer makes
// latent layers sparse, the DeepSeek MoE's leading layers are dense).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"
#include "model/tensor_role.h"

namespace lineage::model {

struct ModelConfig;
struct LayerWeights;
class GgufFile;
class JsonField;
class TensorPlanner;
struct BoundTensor;
struct LayerBinder;

enum class MixerKind : uint8_t {
#define LINEAGE_MIXER(kind, folder) kind,
#include "kinds/kinds.def"
};

enum class FfnKind : uint8_t {
#define LINEAGE_FFN(kind, folder) kind,
#include "kinds/kinds.def"
};

// One layer: its mixer and its feed-forward.
struct LayerPair {
  MixerKind mixer;
  FfnKind ffn;
  bool operator==(const LayerPair&) const = default;
};

// The roles of a kind's own tensors (tensor_role.h): role i < 64 of a
// kind, numbered apart from the model-wide ones and from every other
// kind's, so each kind names its roles in its own folder.
constexpr Role MixerRole(MixerKind k, int i) { return KindRole(static_cast<int>(k), i); }
constexpr Role FfnRole(FfnKind k, int i) { return KindRole(32 + static_cast<int>(k), i); }

// What every kind gives the model library (its folder's model/ spec).
struct KindTensors {
  // Adds layer l's tensors of this kind, in checkpoint order.
  void (*plan)(TensorPlanner& p, int64_t layer);
  // Binds a found tensor of one of this kind's roles into w; false for a
  // role of another kind.
  bool (*bind)(const BoundTensor& t, LayerWeights& w);
  // After every planned tensor is bound: what the kind builds from them or
  // looks up itself (the Qwen routed experts in whichever layout the file
  // has; Qwen3-Next's row blocks). Null when nothing.
  Status (*finish)(const LayerBinder& b, LayerWeights& w);
};

// A GGUF metadata key a kind writes: its full name and value.
struct GgufKey {
  std::string key;
  std::variant<uint32_t, float, bool, std::string, std::vector<bool>> value;
};

// A kind's own hyperparameters: the ModelConfig struct in its folder
// (kinds that share widths share one: the delta rule's, latent attention's,
// the experts'), in both file forms. A hook covers its fields only where
// the model has the kind. The readers run after the architecture's fields (layer
// kinds, widths, context length) and leave c as it is where the file holds
// none of their keys; `validate` runs in ValidateConfig. Each member may be
// null.
struct KindConfig {
  Status (*read_gguf)(const GgufFile& g, const std::string& arch_prefix, ModelConfig* c);
  Status (*read_hf)(const JsonField& text_config, ModelConfig* c);
  std::vector<GgufKey> (*gguf_keys)(const ModelConfig& c, const std::string& arch_prefix);
  void (*write_hf)(const ModelConfig& c, nlohmann::ordered_json& text_config);
  Status (*validate)(const ModelConfig& c);
  // The values a disk cache's model fingerprint covers (engine/disk_codec.h).
  std::vector<double> (*fingerprint)(const ModelConfig& c);
  // Refines the architecture's layers where this kind's fields decide
  // (ModelConfig::layers): run by RefineLayers.
  void (*refine_layers)(ModelConfig* c) = nullptr;
};

// Every kind's refine_layers, in kind order: the readers run it after the
// kinds' fields are read, a shape after it states them.
void RefineLayers(ModelConfig* c);

struct MixerKindInfo {
  const char* name;
  bool recurrent;  // a fixed-size state per sequence; otherwise rows in the KV pages
  // fp32 values layer l keeps: per token in the KV pages, and in its
  // recurrent state per sequence.
  int64_t (*kv_floats_per_token)(const ModelConfig& c, int64_t layer);
  int64_t (*state_floats)(const ModelConfig& c);
  KindTensors tensors;
  const KindConfig* config = nullptr;  // null: no fields of its own
  // Of kv_floats_per_token, the values layer l keeps per token in a block
  // of the page beside the KV rows (the sparse kind's indexer keys,
  // cache/kv_pages.h); null: none.
  int64_t (*side_floats_per_token)(const ModelConfig& c, int64_t layer) = nullptr;
  // The kind an MTP block runs where the trunk's attention is of this kind
  // (the sparse kind drafts with dense latent attention, as llama.cpp
  // does); null: this kind.
  const MixerKind* draft_kind = nullptr;
};

// True when some layer of c (its MTP block included) is of kind k: a
// kind's writers, check and fingerprint cover its fields only then.
bool UsesMixer(const ModelConfig& c, MixerKind k);
bool UsesFfn(const ModelConfig& c, FfnKind k);

// side_floats_per_token of layer l's mixer, 0 where the kind has none.
int64_t SideFloats(const ModelConfig& c, int64_t layer);

struct FfnKindInfo {
  const char* name;
  KindTensors tensors;
  const KindConfig* config = nullptr;
};

const MixerKindInfo& Info(MixerKind k);
const FfnKindInfo& Info(FfnKind k);
// The kinds' own config hooks (those that have one), mixers then
// feed-forwards, for the readers, writers, checks and fingerprint that
// cover every kind.
const std::vector<const KindConfig*>& KindConfigs();

// Size functions the kinds share.
inline int64_t NoKvRows(const ModelConfig&, int64_t) { return 0; }
inline int64_t NoState(const ModelConfig&) { return 0; }
// GDN and KDA: the conv window (K - 1 rows of the conv channels) and one
// d_k x d_v delta state per value head (spec §2.8, §7.2).
int64_t DeltaStateFloats(const ModelConfig& c);

}  // namespace lineage::model
