// FileDiskTier in a shared directory (docs/disk-format.md, "Sharing a
// directory"): the rescan that adopts entries other processes wrote and
// forgets those they deleted, and the collector that deletes blobs and holds
// the joint byte cap. Both run on the writer thread only.
#include <algorithm>
#include <unordered_map>

#include "cache/disk/dir_scan.h"
#include "cache/disk/file_disk_tier.h"

namespace lineage::cache::disk {

Result<DirLock> FileDiskTier::ShareCollectLock() {
  return DirLock::Acquire(layout_.collect_lock_path(), LockMode::kShared, /*wait=*/true, env_);
}

void FileDiskTier::RefreshShared(bool collect) {
  Rescan();
  bool due = collect;
  {
    std::lock_guard<std::mutex> lock(mu_);
    due = due || index_.bytes() > options_.cap_bytes || ++rescans_since_collect_ >= options_.collect_every;
  }
  if (due) CollectShared();
}

void FileDiskTier::Rescan() {
  Result<std::vector<DirEntry>> names = env_->List(layout_.entries_dir());
  if (!names.ok()) {
    Log("rescan: " + names.status().ToString());
    return;
  }
  std::unordered_map<uint64_t, EntryId> known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, e] : index_.entries()) known.emplace(e.meta.file_id, id);
  }
  std::unordered_set<uint64_t> present;
  std::vector<IndexedEntry> adopted;
  for (const DirEntry& d : *names) {
    uint64_t file_id = 0;
    if (!DirLayout::ParseEntryName(d.name, &file_id) || d.kind != FileKind::kRegular) continue;
    present.insert(file_id);
    if (known.count(file_id) || unreadable_files_.count(file_id)) continue;
    const std::string path = layout_.EntryPath(file_id);
    Result<EntryMeta> meta = ReadEntryFile(env_, path);
    if (!meta.ok()) {
      if (meta.status().code() == StatusCode::kNotFound) continue;  // deleted since the listing
      unreadable_files_.insert(file_id);
      Log("skipping " + meta.status().ToString());
      continue;
    }
    if (!(meta->fingerprint == codec_->fingerprint()) || meta->page_tokens != codec_->page_tokens() ||
        meta->file_id != file_id) {
      unreadable_files_.insert(file_id);  // another model's: left alone, never served
      continue;
    }
    Result<uint64_t> size = env_->FileSize(path);
    Result<int64_t> mtime = env_->MtimeMs(path);
    if (!size.ok()) continue;
    adopted.push_back({std::move(*meta), static_cast<int64_t>(*size), mtime.ok() ? *mtime : 0, 0});
  }

  std::lock_guard<std::mutex> lock(mu_);
  ++counters_.rescans;
  std::vector<EntryId> vanished;
  for (const auto& [id, e] : index_.entries()) {
    if (!present.count(e.meta.file_id)) vanished.push_back(id);
  }
  for (EntryId id : vanished) {
    std::vector<BlobKey> orphans;
    index_.Unpublish(id, &orphans);
    for (const BlobKey& b : orphans) index_.TakeOrphan(b);
    ++counters_.vanished_entries;
  }
  for (IndexedEntry& e : adopted) {
    const auto num_tokens = static_cast<int64_t>(e.meta.tokens.size());
    for (int64_t p = 0; p < static_cast<int64_t>(e.meta.pages.size()); ++p) {
      const BlobKey b{BlobKind::kPage, e.meta.pages[p]};
      index_.AddBlob(b, BlobFileBytes(b, PageRows(num_tokens, e.meta.page_tokens, p)));
    }
    for (const StateRef& st : e.meta.states) {
      const BlobKey b{BlobKind::kState, st.key};
      index_.AddBlob(b, BlobFileBytes(b, 0));
    }
    index_.Publish(next_restored_id_++, std::move(e));
    ++counters_.adopted_entries;
  }
}

bool FileDiskTier::CollectShared() {
  Result<DirLock> exclusive = DirLock::Acquire(layout_.collect_lock_path(), LockMode::kExclusive, /*wait=*/false, env_);
  if (!exclusive.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.collections_deferred;
    return false;
  }
  Result<DirScan> scan = ScanDir(env_, layout_);
  if (!scan.ok()) {
    Log("collect: " + scan.status().ToString());
    return false;
  }
  // No writer is between its first blob and its entry's rename: every
  // temporary file is a crashed writer's.
  for (const std::string& tmp : scan->tmp_files) (void)env_->Remove(tmp);

  struct Blob {
    int64_t bytes = 0;
    int64_t refs = 0;
  };
  std::unordered_map<Key128, Blob, Key128Hash> pages, states;
  int64_t total = 0;
  auto size_of = [&](const std::string& path) {
    Result<uint64_t> size = env_->FileSize(path);
    return size.ok() ? static_cast<int64_t>(*size) : 0;
  };
  for (const Key128& k : scan->pages) total += pages[k].bytes = size_of(layout_.PagePath(k));
  for (const Key128& k : scan->states) total += states[k].bytes = size_of(layout_.StatePath(k));
  for (const ScannedEntry& e : scan->entries) {
    total += e.file_bytes;
    for (const Key128& k : e.meta.pages) {
      if (auto it = pages.find(k); it != pages.end()) ++it->second.refs;
    }
    for (const StateRef& s : e.meta.states) {
      if (auto it = states.find(s.key); it != states.end()) ++it->second.refs;
    }
  }
  int64_t evicted = 0;
  auto remove_blob = [&](BlobKind kind, const Key128& k, Blob& b) {
    (void)env_->Remove(kind == BlobKind::kPage ? layout_.PagePath(k) : layout_.StatePath(k));
    total -= b.bytes;
    b.bytes = 0;
  };
  for (auto& [k, b] : pages) {
    if (b.refs == 0) remove_blob(BlobKind::kPage, k, b);
  }
  for (auto& [k, b] : states) {
    if (b.refs == 0) remove_blob(BlobKind::kState, k, b);
  }
  // Oldest last use first, anchors after every other entry; another model's
  // entries are counted but never evicted.
  std::vector<const ScannedEntry*> order;
  for (const ScannedEntry& e : scan->entries) {
    if (e.meta.fingerprint == codec_->fingerprint()) order.push_back(&e);
  }
  std::sort(order.begin(), order.end(), [](const ScannedEntry* a, const ScannedEntry* b) {
    if (a->meta.anchor != b->meta.anchor) return !a->meta.anchor;
    return a->mtime_ms < b->mtime_ms;
  });
  for (const ScannedEntry* e : order) {
    if (total <= options_.cap_bytes) break;
    (void)env_->Remove(e->path);
    total -= e->file_bytes;
    ++evicted;
    for (const Key128& k : e->meta.pages) {
      if (auto it = pages.find(k); it != pages.end() && --it->second.refs == 0) remove_blob(BlobKind::kPage, k, it->second);
    }
    for (const StateRef& s : e->meta.states) {
      if (auto it = states.find(s.key); it != states.end() && --it->second.refs == 0) {
        remove_blob(BlobKind::kState, s.key, it->second);
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.collections;
    stats_.evictions += evicted;
    rescans_since_collect_ = 0;
  }
  *exclusive = DirLock();
  Rescan();
  return true;
}

}  // namespace lineage::cache::disk
