#include "cache/disk/disk_index.h"

#include <cassert>
#include <utility>

namespace lineage::cache::disk {

void DiskIndex::AddBlob(const BlobKey& blob, int64_t file_bytes) {
  auto [it, inserted] = MapOf(blob.kind).try_emplace(blob.key);
  if (!inserted) return;
  it->second.bytes = file_bytes;
  bytes_ += file_bytes;
}

bool DiskIndex::HasBlob(const BlobKey& blob) const { return MapOf(blob.kind).count(blob.key) != 0; }

int64_t DiskIndex::EntryBytes(const IndexedEntry& e) const {
  int64_t bytes = e.file_bytes;
  auto add = [&](const BlobMap& m, const Key128& key) {
    auto it = m.find(key);
    if (it != m.end()) bytes += it->second.bytes;
  };
  for (const Key128& page : e.meta.pages) add(pages_, page);
  for (const StateRef& s : e.meta.states) add(states_, s.key);
  return bytes;
}

bool DiskIndex::TakeOrphan(const BlobKey& blob) {
  BlobMap& m = MapOf(blob.kind);
  auto it = m.find(blob.key);
  if (it == m.end() || it->second.refs != 0) return false;
  bytes_ -= it->second.bytes;
  m.erase(it);
  return true;
}

void DiskIndex::Publish(EntryId id, IndexedEntry e) {
  assert(entries_.count(id) == 0);
  for (const Key128& k : e.meta.pages) {
    assert(pages_.count(k));
    ++pages_[k].refs;
  }
  for (const StateRef& s : e.meta.states) {
    assert(states_.count(s.key));
    ++states_[s.key].refs;
  }
  const Tokens& t = e.meta.tokens;
  tree_.Insert(t, id);
  for (const StateRef& s : e.meta.states) {
    if (s.kind != PointKind::kEntryEnd) tree_.AddPoint(t, id, s.n, s.kind);
  }
  bytes_ += e.file_bytes;
  num_anchors_ += e.meta.anchor;
  entries_.emplace(id, std::move(e));
}

std::optional<IndexedEntry> DiskIndex::Unpublish(EntryId id, std::vector<BlobKey>* orphans) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  IndexedEntry e = std::move(it->second);
  entries_.erase(it);
  tree_.Remove(e.meta.tokens, id);
  for (const Key128& k : e.meta.pages) {
    if (--pages_[k].refs == 0) orphans->push_back({BlobKind::kPage, k});
  }
  for (const StateRef& s : e.meta.states) {
    if (--states_[s.key].refs == 0) orphans->push_back({BlobKind::kState, s.key});
  }
  bytes_ -= e.file_bytes;
  num_anchors_ -= e.meta.anchor;
  return e;
}

const IndexedEntry* DiskIndex::Find(EntryId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

IndexedEntry* DiskIndex::Find(EntryId id) {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

EntryId DiskIndex::LruVictim() const {
  EntryId victim = kNoEntry;
  bool victim_anchor = true;
  std::pair<int64_t, uint64_t> oldest{INT64_MAX, UINT64_MAX};
  for (const auto& [id, e] : entries_) {
    const bool anchor = e.meta.anchor;
    const std::pair<int64_t, uint64_t> used{e.last_used_ms, e.use_seq};
    if ((victim_anchor && !anchor) || (anchor == victim_anchor && used < oldest)) {
      victim = id;
      victim_anchor = anchor;
      oldest = used;
    }
  }
  return victim;
}

}  // namespace lineage::cache::disk
