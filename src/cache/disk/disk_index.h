// DiskIndex: the in-memory picture of what a disk-tier directory serves —
// published entries (by EntryId) in a PrefixTree for the restore rule of
// §3.1, the blob files present with how many published entries reference
// each, and the bytes all of that occupies. No I/O: the tier does the file
// work and keeps this in step.
//
// Invariants:
//  - every blob a published entry lists is present (Publish requires it);
//  - refs(blob) == number of published entries listing it (a blob listed
//    twice by one entry counts twice);
//  - bytes() == sum of published entry files + every present blob, whether
//    referenced or not (an orphan occupies the disk until it is deleted).
// Thread-safety: none; the tier locks.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/disk/blob_file.h"
#include "cache/disk/entry_file.h"
#include "cache/prefix_tree.h"

namespace lineage::cache::disk {

struct IndexedEntry {
  EntryMeta meta;
  int64_t file_bytes = 0;
  int64_t last_used_ms = 0;  // the entry file's mtime
  uint64_t use_seq = 0;      // breaks ties within one millisecond (this run only)
};

struct BlobKey {
  BlobKind kind = BlobKind::kPage;
  Key128 key;
};

class DiskIndex {
 public:
  // A blob file now present on disk (no-op if already known).
  void AddBlob(const BlobKey& blob, int64_t file_bytes);
  bool HasBlob(const BlobKey& blob) const;
  // The entry's file and every blob it references (shared blobs count in
  // each entry that references them).
  int64_t EntryBytes(const IndexedEntry& e) const;
  // Forgets a blob no entry references, so the caller may delete its file.
  // False (and nothing changes) if some entry still references it.
  bool TakeOrphan(const BlobKey& blob);

  // REQUIRES: id not published; every blob of e.meta present.
  void Publish(EntryId id, IndexedEntry e);
  // Removes entry `id`; blobs whose refs fall to 0 are appended to `orphans`.
  std::optional<IndexedEntry> Unpublish(EntryId id, std::vector<BlobKey>* orphans);

  const IndexedEntry* Find(EntryId id) const;
  IndexedEntry* Find(EntryId id);
  // Least recently used entry, anchors only when no other is left.
  EntryId LruVictim() const;
  const PrefixTree& tree() const { return tree_; }
  const std::unordered_map<EntryId, IndexedEntry>& entries() const { return entries_; }

  int64_t bytes() const { return bytes_; }
  int64_t num_anchors() const { return num_anchors_; }
  int64_t num_blobs() const { return static_cast<int64_t>(pages_.size() + states_.size()); }

 private:
  struct BlobRef {
    int64_t refs = 0;
    int64_t bytes = 0;
  };
  using BlobMap = std::unordered_map<Key128, BlobRef, Key128Hash>;
  BlobMap& MapOf(BlobKind kind) { return kind == BlobKind::kPage ? pages_ : states_; }
  const BlobMap& MapOf(BlobKind kind) const { return kind == BlobKind::kPage ? pages_ : states_; }

  std::unordered_map<EntryId, IndexedEntry> entries_;
  PrefixTree tree_;
  BlobMap pages_;
  BlobMap states_;
  int64_t bytes_ = 0;
  int64_t num_anchors_ = 0;
};

}  // namespace lineage::cache::disk
