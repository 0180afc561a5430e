// FileDiskTier::Load: reads the pages below the restore point and the one
// state it needs, verifying every file; a damaged entry is forgotten. The
// reads run on the reader thread under a deadline, so a stalled device costs
// the caller (the server's scheduler) at most the deadline, once.
#include <chrono>
#include <future>

#include "cache/disk/blob_file.h"
#include "cache/disk/dir_scan.h"
#include "cache/disk/file_disk_tier.h"
#include "core/clock.h"

namespace lineage::cache::disk {

Result<DiskLoad> FileDiskTier::Load(EntryId entry, int64_t length) {
  if (length <= 0) return OutOfRange("disk load: length outside the entry");
  std::packaged_task<Result<DiskLoad>()> task([this, entry, length] { return ReadLoad(entry, length); });
  std::future<Result<DiskLoad>> done = task.get_future();
  bool late = false;
  {
    std::lock_guard<std::mutex> lock(reader_mu_);
    late = reader_late_;
    if (!late) reads_.push_back(std::move(task));
  }
  if (late) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.refused_loads;
    return IoError("disk load: an earlier read is still running past its deadline; not waiting behind it");
  }
  reader_cv_.notify_one();
  const int64_t bytes = BlobFileBytes({BlobKind::kPage, {}}, length) + BlobFileBytes({BlobKind::kState, {}}, 0);
  const int64_t deadline_ms = options_.load_deadline_ms + bytes * options_.load_ms_per_gib / (int64_t{1} << 30);
  if (done.wait_for(std::chrono::milliseconds(deadline_ms)) == std::future_status::ready) return done.get();
  {
    // Under reader_mu_: a read that ends now either is seen ready here, or
    // the reader clears the flag after it, so the flag never outlives it.
    std::lock_guard<std::mutex> lock(reader_mu_);
    if (done.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return done.get();
    reader_late_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.late_loads;
  }
  const Status overran = IoError("disk load: reading " + std::to_string(length) + " tokens (" + std::to_string(bytes) +
                              " bytes) took longer than " + std::to_string(deadline_ms) + " ms");
  Log(overran.message() + "; prefilling instead");
  return overran;
}

void FileDiskTier::ReaderLoop() {
  std::unique_lock<std::mutex> lock(reader_mu_);
  for (;;) {
    reader_cv_.wait(lock, [&] { return reader_stop_ || !reads_.empty(); });
    if (reads_.empty()) return;  // stopping
    std::packaged_task<Result<DiskLoad>()> task = std::move(reads_.front());
    reads_.pop_front();
    lock.unlock();
    task();
    lock.lock();
    // Loads refused meanwhile were never queued: an empty queue means no read is late.
    if (reads_.empty()) reader_late_ = false;
  }
}

Result<DiskLoad> FileDiskTier::ReadLoad(EntryId entry, int64_t length) {
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

  // Shared: no collector deletes a blob while this restore reads; an entry
  // whose file another process deleted is forgotten here, not judged damaged.
  DirLock sharing;
  if (options_.shared) {
    Result<DirLock> l = ShareCollectLock();
    if (!l.ok()) return l.status();
    sharing = std::move(*l);
    if (!env_->FileSize(layout_.EntryPath(file_id)).ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.gone_loads;
      if (const IndexedEntry* e = index_.Find(entry); e && e->meta.file_id == file_id) {
        std::vector<BlobKey> orphans;
        index_.Unpublish(entry, &orphans);
        for (const BlobKey& b : orphans) index_.TakeOrphan(b);
      }
      return NotFound("disk load: entry " + DirLayout::EntryName(file_id) + " is gone (deleted by another process)");
    }
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

  for (const Want& w : pages) {
    env_->Prefetch(layout_.PagePath(w.key), static_cast<uint64_t>(BlobFileBytes({BlobKind::kPage, w.key}, w.rows)));
  }
  if (state) env_->Prefetch(layout_.StatePath(*state), static_cast<uint64_t>(BlobFileBytes({BlobKind::kState, *state}, 0)));
  // One buffer serves every page: it stays warm in cache and is allocated once.
  std::vector<uint8_t> file;
  std::unique_ptr<KvBuilder> kv = codec_->NewKvBuilder(length);
  for (const Want& w : pages) {
    Result<BlobHeader> h = ReadBlobFile(env_, layout_.PagePath(w.key), BlobKind::kPage, fp, w.key, &file);
    if (h.ok() && static_cast<int64_t>(h->tokens) != w.rows) h = Corrupt("page holds the wrong row count");
    if (!h.ok()) return forget(h.status());
    if (Status st = kv->AddPage({BlobPayload(file, *h), w.rows}); !st.ok()) return forget(st);
    bytes_read += static_cast<int64_t>(file.size());
  }
  DiskLoad out;
  Result<KvPtr> built = kv->Finish();
  if (!built.ok()) return forget(built.status());
  out.kv = std::move(*built);
  if (state) {
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
