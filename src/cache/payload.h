// What the cache policy sees of model state: sizes and identities, never
// tensor contents (DESIGN.md §3.8).
//
// The policy is written once and runs on two kinds of payload:
//   - in the server, real engine state: KV pages of every attention layer
//     (src/cache/kv_pages.h) and fp32 recurrent-state blobs;
//   - in the simulator, byte counts and page ids only.
// Both implement the two interfaces below. The policy charges every distinct
// PageId once against the RAM budget however many entries share it, plus
// every RecurrentBlob's bytes().
//
// Thread-safety: payload objects are immutable after construction and may be
// read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace lineage::cache {

using PageId = uint64_t;  // unique for the life of the process; never reused

// KV rows [0, num_tokens()) of every attention layer, held as a list of
// fixed-size pages (page_tokens() tokens each; the last may be partly used).
// Attention-free models still have a KvView with zero-byte pages.
class KvView {
 public:
  virtual ~KvView() = default;
  virtual int64_t num_tokens() const = 0;
  virtual int64_t page_tokens() const = 0;
  // Bytes one page occupies in RAM (all layers, K and V).
  virtual int64_t page_bytes() const = 0;
  // ceil(num_tokens / page_tokens) ids; equal ids mean the same shared page.
  virtual std::span<const PageId> page_ids() const = 0;
  // A view of rows [0, n) sharing this view's pages (n <= num_tokens()).
  // The page holding row n-1 is shared too: readers never look past n.
  virtual std::shared_ptr<const KvView> Prefix(int64_t n) const = 0;
};

// The recurrent state (conv window + delta state of every recurrent layer) at
// one token length. Null for attention-only models.
class RecurrentBlob {
 public:
  virtual ~RecurrentBlob() = default;
  virtual int64_t bytes() const = 0;
};

using KvPtr = std::shared_ptr<const KvView>;
using RecurrentPtr = std::shared_ptr<const RecurrentBlob>;

}  // namespace lineage::cache
