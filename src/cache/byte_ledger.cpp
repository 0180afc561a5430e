#include "cache/byte_ledger.h"

#include <cassert>

namespace lineage::cache {

int64_t ByteLedger::AddKv(const KvView& kv, bool private_copy) {
  const int64_t before = kv_bytes_;
  if (private_copy) {
    kv_bytes_ += static_cast<int64_t>(kv.page_ids().size()) * kv.page_bytes();
  } else {
    for (PageId id : kv.page_ids()) {
      if (pages_[id]++ == 0) kv_bytes_ += kv.page_bytes();
    }
  }
  return kv_bytes_ - before;
}

int64_t ByteLedger::RemoveKv(const KvView& kv, bool private_copy) {
  const int64_t before = kv_bytes_;
  if (private_copy) {
    kv_bytes_ -= static_cast<int64_t>(kv.page_ids().size()) * kv.page_bytes();
    return before - kv_bytes_;
  }
  for (PageId id : kv.page_ids()) {
    auto it = pages_.find(id);
    assert(it != pages_.end());
    if (it == pages_.end()) continue;
    if (--it->second == 0) {
      pages_.erase(it);
      kv_bytes_ -= kv.page_bytes();
    }
  }
  return before - kv_bytes_;
}

int64_t ByteLedger::AddBlob(const RecurrentBlob* blob) {
  if (!blob || blobs_[blob]++ != 0) return 0;
  blob_bytes_ += blob->bytes();
  return blob->bytes();
}

int64_t ByteLedger::RemoveBlob(const RecurrentBlob* blob) {
  if (!blob) return 0;
  auto it = blobs_.find(blob);
  assert(it != blobs_.end());
  if (it == blobs_.end() || --it->second != 0) return 0;
  blobs_.erase(it);
  blob_bytes_ -= blob->bytes();
  return blob->bytes();
}

int64_t ByteLedger::References(PageId page) const {
  auto it = pages_.find(page);
  return it == pages_.end() ? 0 : it->second;
}

int64_t ByteLedger::References(const RecurrentBlob* blob) const {
  auto it = blobs_.find(blob);
  return it == blobs_.end() ? 0 : it->second;
}

}  // namespace lineage::cache
