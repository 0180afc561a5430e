// StateCodec: how the disk tier turns real model state into bytes and back,
// without the cache module knowing the engine (DESIGN.md §3.8). The engine
// implements it (src/engine/disk_codec.h) for its PagedKv pages and
// RecurrentState blobs; tests implement it over small synthetic states.
//
// Contract:
//  - fingerprint() names the model (and its file layout) the bytes belong
//    to; a file with another fingerprint is never decoded.
//  - A page payload holds rows [0, num_rows) of one KV page of every
//    attention layer; its size is page_payload_bytes(num_rows).
//  - A state payload holds one recurrent state; its size is state_bytes()
//    (0 for attention-only models, which have no states).
//  - Decode* check sizes and return kCorrupt on a mismatch; they never trust
//    their input beyond what the tier has already verified (checksums).
//
// Thread-safety: every method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/disk/format.h"
#include "cache/payload.h"
#include "core/status.h"

namespace lineage::cache::disk {

// One stored page as read back: its payload and how many rows it holds.
struct PagePayload {
  std::span<const uint8_t> bytes;
  int64_t num_rows = 0;
};

class StateCodec {
 public:
  virtual ~StateCodec() = default;

  virtual const Key128& fingerprint() const = 0;
  virtual int64_t page_tokens() const = 0;
  virtual int64_t page_payload_bytes(int64_t num_rows) const = 0;
  virtual int64_t state_bytes() const = 0;

  // Appends the payload of rows [0, num_rows) of page `page_index` of `kv`.
  virtual Status EncodePage(const KvView& kv, int64_t page_index, int64_t num_rows,
                            std::vector<uint8_t>* out) const = 0;
  // KV rows [0, num_tokens) from the payloads of pages 0, 1, ...; each page
  // holds at least the rows below num_tokens that fall inside it.
  virtual Result<KvPtr> DecodeKv(std::span<const PagePayload> pages, int64_t num_tokens) const = 0;

  virtual Status EncodeState(const RecurrentBlob& state, std::vector<uint8_t>* out) const = 0;
  virtual Result<RecurrentPtr> DecodeState(std::span<const uint8_t> bytes) const = 0;
};

}  // namespace lineage::cache::disk
