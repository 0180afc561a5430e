// EngineDiskCodec: the engine's side of the disk tier (cache/disk/codec.h).
// It names the loaded model with a fingerprint and moves the engine's state
// to and from bytes: PagedKv pages in the stored page order of
// cache/disk/paged_kv_codec.h, RecurrentState as its fp32 array (per GDN
// layer, the conv window [K-1, conv_dim] then the delta state [H_v, d_k, d_v]).
//
// The fingerprint is XXH3-128 over the architecture, every shape field of the
// config, and for every weight its name, dtype, shape and the first and last
// 4 KiB of its bytes (small decoded vectors are hashed whole), so two random
// models of one shape differ while hashing a 16 GB model stays instant.
//
// Thread-safety: immutable after construction.
#pragma once

#include <memory>

#include "cache/disk/codec.h"
#include "cache/kv_pages.h"
#include "engine/recurrent_state.h"
#include "model/weights.h"

namespace lineage::engine {

class Engine;

cache::disk::Key128 ModelFingerprint(const model::Model& model);

class EngineDiskCodec final : public cache::disk::StateCodec {
 public:
  EngineDiskCodec(const cache::disk::Key128& fingerprint, const cache::KvLayout& kv, const RecurrentLayout& rec)
      : fingerprint_(fingerprint), kv_(kv), rec_(rec) {}
  static std::shared_ptr<const EngineDiskCodec> For(const Engine& engine);

  const cache::disk::Key128& fingerprint() const override { return fingerprint_; }
  int64_t page_tokens() const override { return kv_.page_tokens; }
  int64_t page_payload_bytes(int64_t num_rows) const override;
  int64_t state_bytes() const override { return rec_.total_floats() * 4; }

  Status EncodePage(const cache::KvView& kv, int64_t page_index, int64_t num_rows,
                    std::vector<uint8_t>* out) const override;
  Result<cache::KvPtr> DecodeKv(std::span<const cache::disk::PagePayload> pages, int64_t num_tokens) const override;
  Status EncodeState(const cache::RecurrentBlob& state, std::vector<uint8_t>* out) const override;
  Result<cache::RecurrentPtr> DecodeState(std::span<const uint8_t> bytes) const override;

 private:
  cache::disk::Key128 fingerprint_;
  cache::KvLayout kv_;
  RecurrentLayout rec_;
};

}  // namespace lineage::engine
