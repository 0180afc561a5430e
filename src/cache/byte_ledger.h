// ByteLedger: the byte count behind a budget (DESIGN.md §3.5). A shared KV
// page is charged once however many views hold it; a recurrent blob is
// charged once however many checkpoints hold it. Views added as private
// copies (the previous design's whole snapshots) are charged in full each
// time. Every Add must be matched by a Remove of the same object.
// Thread-safety: none; the owner locks.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "cache/payload.h"

namespace lineage::cache {

class ByteLedger {
 public:
  // Each returns the bytes it newly charged or released.
  int64_t AddKv(const KvView& kv, bool private_copy);
  int64_t RemoveKv(const KvView& kv, bool private_copy);
  int64_t AddBlob(const RecurrentBlob* blob);
  int64_t RemoveBlob(const RecurrentBlob* blob);

  int64_t kv_bytes() const { return kv_bytes_; }
  int64_t blob_bytes() const { return blob_bytes_; }
  int64_t total_bytes() const { return kv_bytes_ + blob_bytes_; }
  // How many views or holders reference a page or a blob (0: none).
  int64_t References(PageId page) const;
  int64_t References(const RecurrentBlob* blob) const;
  int64_t distinct_pages() const { return static_cast<int64_t>(pages_.size()); }

 private:
  std::unordered_map<PageId, int64_t> pages_;  // page -> references
  std::unordered_map<const RecurrentBlob*, int64_t> blobs_;
  int64_t kv_bytes_ = 0;
  int64_t blob_bytes_ = 0;
};

}  // namespace lineage::cache
