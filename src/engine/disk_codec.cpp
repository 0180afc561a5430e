#include "engine/disk_codec.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <cstring>
#include <string>

#include "cache/disk/paged_kv_codec.h"
#include "engine/engine.h"
#include "engine/layer_table.h"

namespace lineage::engine {
namespace {

constexpr int64_t kEdgeBytes = 4096;

class Hasher {
 public:
  Hasher() { XXH3_128bits_reset(&st_); }
  void Bytes(const void* p, size_t n) { XXH3_128bits_update(&st_, p, n); }
  void Str(const std::string& s) {
    I64(static_cast<int64_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  void I64(int64_t v) { Bytes(&v, 8); }
  void F64(double v) { Bytes(&v, 8); }
  void Floats(const char* label, const std::vector<float>& v) {
    Str(label);
    I64(static_cast<int64_t>(v.size()));
    Bytes(v.data(), v.size() * 4);
  }
  void Tensor(const TensorView& t) {
    Str(t.name);
    I64(static_cast<int64_t>(t.dtype));
    I64(static_cast<int64_t>(t.shape.size()));
    for (int64_t d : t.shape) I64(d);
    I64(t.nbytes);
    if (t.data == nullptr) return;
    const auto* b = static_cast<const uint8_t*>(t.data);
    const int64_t head = std::min(t.nbytes, kEdgeBytes);
    Bytes(b, static_cast<size_t>(head));
    const int64_t tail = std::min(t.nbytes - head, kEdgeBytes);
    Bytes(b + t.nbytes - tail, static_cast<size_t>(tail));
  }
  cache::disk::Key128 Digest() {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st_));
    cache::disk::Key128 k;
    std::memcpy(k.bytes.data(), c.digest, 16);
    return k;
  }

 private:
  XXH3_state_t st_;
};

}  // namespace

cache::disk::Key128 ModelFingerprint(const model::Model& m) {
  const model::ModelConfig& c = m.config;
  Hasher h;
  h.Str("lineage model fingerprint v4");
  h.Str(model::ArchName(c.arch));
  for (int64_t v : {c.hidden, c.num_layers, c.intermediate, c.vocab, c.num_heads, c.num_kv_heads, c.head_dim,
                    c.rope_dims, int64_t{c.tied_embeddings}, int64_t{c.attn_output_gate},
                    int64_t{c.zero_centred_norms}, c.attn_res_block}) {
    h.I64(v);
  }
  h.F64(c.rms_eps);
  h.F64(c.rope_theta);
  for (int64_t l = 0; l < c.num_layers; ++l) {  // the layer kinds
    h.Str(model::Info(c.mixer(l)).name);
    h.Str(model::Info(c.ffn(l)).name);
  }
  for (const model::KindConfig* k : model::KindConfigs())  // and their own fields
    if (k->fingerprint)
      for (double v : k->fingerprint(c)) h.F64(v);
  const model::Weights& w = m.weights;
  h.Tensor(w.embed);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const model::LayerWeights& l = w.layers[i];
    h.Floats("input_norm", l.input_norm);
    h.Floats("post_norm", l.post_norm);
    for (const TensorView* t : MixerMatrices(c.mixer(i), l)) h.Tensor(*t);
    for (const auto& [name, v] : MixerVectors(c.mixer(i), l))
      if (!v->empty()) h.Floats(name.c_str(), *v);
    for (const TensorView* t : {&l.gate_proj, &l.up_proj, &l.down_proj}) h.Tensor(*t);
    if (c.moe_layer(i)) {  // the edges of the first and last expert stand for all of them
      const model::MoeWeights& m = l.moe;
      for (const TensorView* t : {&m.router, &m.shared_gate, &m.shared_up, &m.shared_down, &m.gate.front(),
                                  &m.down.front(), &m.gate.back(), &m.down.back()})
        h.Tensor(*t);
      h.Floats("shared_gate_inp", m.shared_gate_inp);
      if (!m.score_bias.empty()) h.Floats("score_bias", m.score_bias);
      for (const TensorView* t : {&m.latent_down, &m.latent_up})
        if (t->valid()) h.Tensor(*t);
    }
    if (!l.attn_res_score.empty()) h.Floats("attn_res_score", l.attn_res_score);
    if (!l.ffn_res_score.empty()) h.Floats("ffn_res_score", l.ffn_res_score);
  }
  h.Floats("final_norm", w.final_norm);
  if (!w.output_res_score.empty()) h.Floats("output_res_score", w.output_res_score);
  h.Tensor(w.lm_head);
  return h.Digest();
}

std::shared_ptr<const EngineDiskCodec> EngineDiskCodec::For(const Engine& engine) {
  // Pages are stored in the engine's KV element type, so files written with
  // another type belong to another fingerprint and are never read back.
  cache::disk::Key128 fingerprint = ModelFingerprint(engine.model());
  if (engine.kv_layout().dtype != DType::kF32) {
    Hasher h;
    h.Bytes(fingerprint.bytes.data(), fingerprint.bytes.size());
    h.Str(std::string(Info(engine.kv_layout().dtype).name));
    fingerprint = h.Digest();
  }
  // With the MTP block on, pages hold one more layer, written by its weights.
  if (engine.mtp()) {
    const model::MtpWeights& m = engine.model().weights.mtp;
    Hasher h;
    h.Bytes(fingerprint.bytes.data(), fingerprint.bytes.size());
    h.Str("mtp kv layer");
    h.Tensor(m.eh_proj);
    h.Floats("enorm", m.enorm);
    h.Floats("hnorm", m.hnorm);
    h.Floats("input_norm", m.layer.input_norm);
    const model::MixerKind kind = engine.config().mixer(engine.config().num_layers);
    for (const TensorView* t : MixerMatrices(kind, m.layer)) h.Tensor(*t);
    for (const auto& [name, v] : MixerVectors(kind, m.layer))
      if (!v->empty()) h.Floats(name.c_str(), *v);
    fingerprint = h.Digest();
  }
  return std::make_shared<EngineDiskCodec>(fingerprint, engine.kv_layout(), engine.recurrent_layout());
}

int64_t EngineDiskCodec::page_payload_bytes(int64_t num_rows) const {
  return cache::disk::PagedKvPayloadBytes(kv_, num_rows);
}

Status EngineDiskCodec::EncodePage(const cache::KvView& kv, int64_t page_index, int64_t num_rows,
                                   std::vector<uint8_t>* out) const {
  return cache::disk::EncodePagedKvPage(kv_, kv, page_index, num_rows, out);
}

std::unique_ptr<cache::disk::KvBuilder> EngineDiskCodec::NewKvBuilder(int64_t num_tokens) const {
  return cache::disk::NewPagedKvBuilder(kv_, num_tokens);
}

Status EngineDiskCodec::EncodeState(const cache::RecurrentBlob& state, std::vector<uint8_t>* out) const {
  const auto* rs = dynamic_cast<const RecurrentState*>(&state);
  if (rs == nullptr || !rs->SameLayout(rec_)) return InvalidArgument("disk codec: not a RecurrentState of this model");
  const size_t start = out->size();
  out->resize(start + static_cast<size_t>(state_bytes()));
  if (state_bytes() > 0) std::memcpy(out->data() + start, rs->conv(0), static_cast<size_t>(state_bytes()));
  return Status::Ok();
}

Result<cache::RecurrentPtr> EngineDiskCodec::DecodeState(std::span<const uint8_t> bytes) const {
  if (static_cast<int64_t>(bytes.size()) != state_bytes()) {
    return Corrupt("disk codec: state of " + std::to_string(bytes.size()) + " bytes, expected " +
                   std::to_string(state_bytes()));
  }
  auto rs = std::make_shared<RecurrentState>(rec_);
  if (!bytes.empty()) std::memcpy(rs->conv(0), bytes.data(), bytes.size());
  return cache::RecurrentPtr(std::move(rs));
}

}  // namespace lineage::engine
