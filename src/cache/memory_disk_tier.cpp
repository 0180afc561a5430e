#include "cache/memory_disk_tier.h"

#include <string>

#include "cache/counted_payload.h"
#include "cache/restore_search.h"

namespace lineage::cache {

KvPtr MemoryDiskTier::StoredContent(const KvPtr& kv) const {
  const auto* counted = dynamic_cast<const CountedKv*>(kv.get());
  if (!counted || stored_page_of_copy_.empty()) return kv;
  std::vector<PageId> content;
  content.reserve(kv->page_ids().size());
  bool copies = false;
  for (PageId id : kv->page_ids()) {
    auto it = stored_page_of_copy_.find(id);
    content.push_back(it == stored_page_of_copy_.end() ? id : it->second);
    copies |= content.back() != id;
  }
  return copies ? counted->WithPages(std::move(content)) : kv;
}

void MemoryDiskTier::Charge(const DiskRecord& r, bool add, int64_t* bytes) {
  int64_t moved = 0;
  const KvPtr kv = StoredContent(r.kv);
  if (add) {
    moved += ledger_.AddKv(*kv, r.whole_snapshot);
    moved += ledger_.AddBlob(r.state.get());
    for (const Checkpoint& c : r.checkpoints) moved += ledger_.AddBlob(c.state.get());
  } else {
    ledger_.RemoveKv(*kv, r.whole_snapshot);
    ledger_.RemoveBlob(r.state.get());
    for (const Checkpoint& c : r.checkpoints) ledger_.RemoveBlob(c.state.get());
  }
  if (bytes) *bytes += moved;
}

Status MemoryDiskTier::Put(const DiskRecord& record) {
  if (record.tokens.empty() || !record.kv || record.kv->num_tokens() != static_cast<int64_t>(record.tokens.size())) {
    return InvalidArgument("disk put: record KV length differs from its tokens");
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Charge the new version before releasing the old so shared pages are not rewritten.
  Charge(record, true, &stats_.bytes_written);
  auto it = entries_.find(record.id);
  if (it != entries_.end()) {
    Charge(it->second.record, false, nullptr);
    tree_.Remove(it->second.record.tokens, record.id);
    stats_.anchors -= it->second.record.anchor;
    lru_.erase({it->second.record.anchor, it->second.last_used, record.id});
    entries_.erase(it);
  }
  tree_.Insert(record.tokens, record.id);
  for (const Checkpoint& c : record.checkpoints) tree_.AddPoint(record.tokens, record.id, c.n, c.kind);
  stats_.anchors += record.anchor;
  entries_[record.id] = {record, ++tick_};
  lru_.insert({record.anchor, tick_, record.id});
  EnforceCapLocked();
  return Status::Ok();
}

std::optional<DiskPoint> MemoryDiskTier::Lookup(TokenSpan prompt, int64_t longer_than, bool recurrent) {
  std::lock_guard<std::mutex> lock(mu_);
  const RestoreSearch found = FindRestorePoint(
      tree_, prompt, recurrent, [&](EntryId id) { return entries_.at(id).last_used; }, {},
      /*want_closest=*/false);
  if (found.best.entry == kNoEntry || found.best.n <= longer_than) return std::nullopt;
  return DiskPoint{found.best.entry, found.best.n, found.best.kind, entries_.at(found.best.entry).record.anchor};
}

int64_t MemoryDiskTier::SharedTokens(TokenSpan prompt) {
  std::lock_guard<std::mutex> lock(mu_);
  return tree_.Walk(prompt, static_cast<int64_t>(prompt.size()), [](const TreePoint&) {});
}

Result<DiskLoad> MemoryDiskTier::Load(EntryId entry, int64_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(entry);
  if (it == entries_.end()) return NotFound("disk load: entry " + std::to_string(entry) + " is gone");
  const DiskRecord& r = it->second.record;
  const auto len = static_cast<int64_t>(r.tokens.size());
  if (length <= 0 || length > len) return OutOfRange("disk load: length outside the entry");
  DiskLoad out;
  out.kv = length == len ? r.kv : r.kv->Prefix(length);
  const auto* counted = dynamic_cast<const CountedKv*>(out.kv.get());
  if (counted && pages_) {
    // Read into new pages, as a real tier reads into new memory.
    const KvPtr stored = StoredContent(out.kv);
    std::vector<PageId> copies;
    copies.reserve(stored->page_ids().size());
    for (PageId id : stored->page_ids()) {
      copies.push_back(pages_->New());
      stored_page_of_copy_.emplace(copies.back(), id);
    }
    out.kv = counted->WithPages(std::move(copies));
  }
  if (length == len) {
    out.state = r.state;
  } else {
    for (const Checkpoint& c : r.checkpoints) {
      if (c.n == length) out.state = c.state;
    }
    if (!out.state && r.state) return NotFound("disk load: no state at length " + std::to_string(length));
  }
  stats_.bytes_read += static_cast<int64_t>(out.kv->page_ids().size()) * out.kv->page_bytes();
  if (out.state) stats_.bytes_read += out.state->bytes();
  lru_.erase({r.anchor, it->second.last_used, entry});
  it->second.last_used = ++tick_;
  lru_.insert({r.anchor, tick_, entry});
  return out;
}

void MemoryDiskTier::EraseLocked(EntryId entry) {
  auto it = entries_.find(entry);
  if (it == entries_.end()) return;
  Charge(it->second.record, false, nullptr);
  tree_.Remove(it->second.record.tokens, entry);
  stats_.anchors -= it->second.record.anchor;
  lru_.erase({it->second.record.anchor, it->second.last_used, entry});
  entries_.erase(it);
}

void MemoryDiskTier::Erase(EntryId entry) {
  std::lock_guard<std::mutex> lock(mu_);
  EraseLocked(entry);
}

void MemoryDiskTier::EnforceCapLocked() {
  // Least recently used first; anchors are the last candidates, not exempt.
  while (ledger_.total_bytes() > cap_bytes_ && !lru_.empty()) {
    EraseLocked(std::get<2>(*lru_.begin()));
    ++stats_.evictions;
  }
}

bool MemoryDiskTier::Contains(EntryId entry) {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(entry) != 0;
}

DiskStats MemoryDiskTier::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  DiskStats s = stats_;
  s.entries = static_cast<int64_t>(entries_.size());
  s.bytes = ledger_.total_bytes();
  s.budget_bytes = cap_bytes_;
  return s;
}

}  // namespace lineage::cache
