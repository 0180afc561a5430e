// MemoryDiskTier: a DiskTier that keeps its "files" in memory and counts the
// bytes a real one would move. Used by the cache tests and the simulator.
//  - Put writes only pages and blobs not already stored (a child entry after
//    its parent costs its new pages), or everything for a whole snapshot.
//  - Load charges the pages of rows [0, length) and the state as read, and
//    (counted payloads) returns them in new pages from `pages`, as a real
//    read does: RAM charges them apart from stored pages still in RAM. The
//    tier remembers which stored page each copy holds, so writing a copy
//    back (the next turn's entry shares it) costs nothing.
//  - Over the byte cap, least recently used entries go first; anchors last.
// The index and the restore rule are the RAM policy's (restore_search.h).
// Thread-safety: every method locks one internal mutex.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "cache/byte_ledger.h"
#include "cache/counted_payload.h"
#include "cache/disk_tier.h"
#include "cache/prefix_tree.h"

namespace lineage::cache {

class MemoryDiskTier final : public DiskTier {
 public:
  // `pages`: the allocator of the RAM side's pages (outlives the tier); a
  // load of counted payloads takes its copies' ids from it. Null: loads hand
  // back the stored pages themselves (payloads that are not counted).
  explicit MemoryDiskTier(int64_t cap_bytes, PageAllocator* pages = nullptr) : cap_bytes_(cap_bytes), pages_(pages) {}

  Status Put(const DiskRecord& record) override;
  std::optional<DiskPoint> Lookup(TokenSpan prompt, int64_t longer_than, bool recurrent) override;
  int64_t SharedTokens(TokenSpan prompt) override;
  Result<DiskLoad> Load(EntryId entry, int64_t length) override;
  void Erase(EntryId entry) override;
  bool Contains(EntryId entry) override;
  DiskStats Stats() override;

 private:
  struct Stored {
    DiskRecord record;
    uint64_t last_used = 0;
  };
  void Charge(const DiskRecord& r, bool add, int64_t* bytes);
  // `kv` with every page read back from disk named by the stored page it copies.
  KvPtr StoredContent(const KvPtr& kv) const;
  void EraseLocked(EntryId entry);
  void EnforceCapLocked();

  std::mutex mu_;
  int64_t cap_bytes_;
  std::unordered_map<EntryId, Stored> entries_;
  // (anchor, last_used, id), the next eviction first: a scan of every entry
  // per eviction made long replays quadratic.
  std::set<std::tuple<bool, uint64_t, EntryId>> lru_;
  PrefixTree tree_;
  ByteLedger ledger_;
  uint64_t tick_ = 0;
  PageAllocator* pages_;
  std::unordered_map<PageId, PageId> stored_page_of_copy_;
  DiskStats stats_;
};

}  // namespace lineage::cache
