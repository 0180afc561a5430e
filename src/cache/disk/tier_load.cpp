// FileDiskTier::Load: reads the pages below the restore point and the one
// state it needs, verifying every file; a damaged entry is forgotten.
#include "cache/disk/blob_file.h"
#include "cache/disk/dir_scan.h"
#include "cache/disk/file_disk_tier.h"
#include "cache/disk/tier_clock.h"

namespace lineage::cache::disk {

Result<DiskLoad> FileDiskTier::Load(EntryId entry, int64_t length) {
  struct Want {
    Key128 key;
    int64_t rows;
  };
  std::vector<Want> pages;
  std::optional<Key128> state;
  uint64_t file_id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const IndexedEntry* e = index_.Find(entry);
    if (e == nullptr) return NotFound("disk load: entry " + std::to_string(entry) + " is gone");
    const auto num_tokens = static_cast<int64_t>(e->meta.tokens.size());
    if (length <= 0 || length > num_tokens) return OutOfRange("disk load: length outside the entry");
    const int64_t pt = e->meta.page_tokens;
    for (int64_t p = 0; p * pt < length; ++p) pages.push_back({e->meta.pages[p], PageRows(num_tokens, pt, p)});
    if (codec_->state_bytes() > 0) {
      for (const StateRef& s : e->meta.states) {
        if (s.n == length) state = s.key;
      }
      if (!state) return NotFound("disk load: no state at length " + std::to_string(length));
    }
    file_id = e->meta.file_id;
  }

  const Key128& fp = codec_->fingerprint();
  int64_t bytes_read = 0;
  auto forget = [&](const Status& st) -> Status {
    std::unique_lock<std::mutex> lock(mu_);
    const IndexedEntry* e = index_.Find(entry);
    if (e == nullptr || e->meta.file_id != file_id) return st;  // erased meanwhile: not damage
    std::vector<BlobKey> orphans;
    index_.Unpublish(entry, &orphans);
    ++counters_.corrupt_loads;
    queue_.push_back({Task::kCollect, entry, nullptr, layout_.EntryPath(file_id), std::move(orphans)});
    Log("entry " + DirLayout::EntryName(file_id) + " is not served: " + st.ToString());
    lock.unlock();
    work_cv_.notify_one();
    return st;
  };

  std::vector<std::vector<uint8_t>> files(pages.size());
  std::vector<PagePayload> payloads;
  payloads.reserve(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    Result<BlobHeader> h = ReadBlobFile(env_, layout_.PagePath(pages[i].key), BlobKind::kPage, fp, pages[i].key,
                                        &files[i]);
    if (h.ok() && static_cast<int64_t>(h->tokens) != pages[i].rows) h = Corrupt("page holds the wrong row count");
    if (!h.ok()) return forget(h.status());
    payloads.push_back({BlobPayload(files[i], *h), pages[i].rows});
    bytes_read += static_cast<int64_t>(files[i].size());
  }
  DiskLoad out;
  Result<KvPtr> kv = codec_->DecodeKv(payloads, length);
  if (!kv.ok()) return forget(kv.status());
  out.kv = std::move(*kv);
  files.clear();
  if (state) {
    std::vector<uint8_t> file;
    Result<BlobHeader> h = ReadBlobFile(env_, layout_.StatePath(*state), BlobKind::kState, fp, *state, &file);
    if (h.ok() && static_cast<int64_t>(h->tokens) != length) h = Corrupt("state is for another length");
    if (!h.ok()) return forget(h.status());
    Result<RecurrentPtr> rs = codec_->DecodeState(BlobPayload(file, *h));
    if (!rs.ok()) return forget(rs.status());
    out.state = std::move(*rs);
    bytes_read += static_cast<int64_t>(file.size());
  }

  // The entry file's mtime is its last use; it survives restarts.
  const int64_t now = WallMs();
  (void)env_->Touch(layout_.EntryPath(file_id), now);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_read += bytes_read;
  if (IndexedEntry* e = index_.Find(entry); e && e->meta.file_id == file_id) {
    e->last_used_ms = now;
    e->use_seq = ++use_seq_;
  }
  return out;
}

}  // namespace lineage::cache::disk
