// FileDiskTier's writer thread: carries out queued writes and deletions, one
// at a time, so every file mutation of a directory happens on one thread.
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "cache/disk/blob_file.h"
#include "cache/disk/file_disk_tier.h"
#include "cache/disk/dir_scan.h"
#include "cache/disk/keys.h"
#include "core/clock.h"

namespace lineage::cache::disk {
namespace {

bool DiskTrouble(const Status& st) {
  return st.code() == StatusCode::kIoError || st.code() == StatusCode::kResourceExhausted;
}

// A whole snapshot shares nothing: its keys are chained from a seed that no
// other entry uses.
Key128 PrivateSeed(const Key128& fingerprint, uint64_t file_id) {
  uint8_t buf[24];
  std::memcpy(buf, fingerprint.bytes.data(), 16);
  PutU64(buf + 16, file_id);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(buf, sizeof(buf)));
  Key128 k;
  std::memcpy(k.bytes.data(), c.digest, 16);
  return k;
}

}  // namespace

void FileDiskTier::WriterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (options_.shared && !stop_ && SteadyMs() >= next_rescan_ms_) {
      busy_ = true;
      lock.unlock();
      RefreshShared(/*collect=*/false);
      lock.lock();
      busy_ = false;
      next_rescan_ms_ = SteadyMs() + options_.rescan_ms;
      if (queue_.empty()) idle_cv_.notify_all();
    }
    const auto ready = [&] { return stop_ || !queue_.empty(); };
    if (options_.shared) {
      work_cv_.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(1, next_rescan_ms_ - SteadyMs())), ready);
      if (!ready()) continue;  // time to rescan
    } else {
      work_cv_.wait(lock, ready);
    }
    if (queue_.empty()) break;  // stop_ and nothing left
    Task task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    if (task.kind == Task::kWrite) {
      --queued_writes_;
      inflight_ = task.id;
      inflight_cancelled_ = false;
    }
    lock.unlock();
    if (task.kind == Task::kWrite) {
      Status st = WriteRecord(task);
      if (!st.ok() && DiskTrouble(st)) {
        DisableWrites(st);
      } else if (!st.ok()) {
        std::lock_guard<std::mutex> g(mu_);
        ++counters_.failed_writes;
        Log("entry not written: " + st.ToString());
      }
    } else if (task.kind == Task::kCollect) {
      if (!task.entry_path.empty()) (void)env_->Remove(task.entry_path);
      DeleteOrphans(task.blobs);
    } else {
      RefreshShared(task.kind == Task::kRefreshCollect);
    }
    lock.lock();
    inflight_ = kNoEntry;
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
  idle_cv_.notify_all();
}

Status FileDiskTier::WriteRecord(const Task& task) {
  const DiskRecord& r = *task.record;
  const int64_t pt = codec_->page_tokens();
  if (r.kv->page_tokens() != pt) return InvalidArgument("disk put: KV pages differ from the codec's page size");
  const auto num_tokens = static_cast<int64_t>(r.tokens.size());
  const Key128& fp = codec_->fingerprint();

  EntryMeta meta;
  meta.file_id = file_ids_();
  meta.fingerprint = fp;
  meta.anchor = r.anchor;
  meta.page_tokens = pt;
  meta.created_ms = WallMs();
  meta.tokens = r.tokens;
  const KeyChain chain(r.whole_snapshot ? PrivateSeed(fp, meta.file_id) : fp, pt, meta.tokens);
  for (int64_t p = 0; p < chain.num_pages(); ++p) meta.pages.push_back(chain.PageKey(p));
  std::map<int64_t, std::pair<PointKind, const RecurrentBlob*>> states;
  if (codec_->state_bytes() > 0) {
    for (const Checkpoint& c : r.checkpoints) {
      if (c.state && c.n >= 1 && c.n < num_tokens) states[c.n] = {c.kind, c.state.get()};
    }
    if (r.state) states[num_tokens] = {PointKind::kEntryEnd, r.state.get()};
  }
  for (const auto& [n, ks] : states) meta.states.push_back({n, ks.first, chain.StateKey(n)});

  // Shared: from deciding which blobs exist until the entry is published, no
  // collector may delete a blob this entry will list.
  DirLock sharing;
  if (options_.shared) {
    Result<DirLock> l = ShareCollectLock();
    if (!l.ok()) return l.status();
    sharing = std::move(*l);
  }
  std::vector<BlobKey> written;
  auto fail = [&](const Status& st) {
    DeleteOrphans(written);
    return st;
  };
  std::vector<uint8_t> buf;
  auto write_blob = [&](const BlobKey& b, int64_t tokens, auto encode) -> Status {
    // Shared: the index may remember a blob another process's collector has
    // deleted since; only the directory (under the lock) says what exists.
    if (!options_.shared) {
      std::lock_guard<std::mutex> lock(mu_);
      if (index_.HasBlob(b)) return Status::Ok();
    }
    const std::string path = BlobPath(b);
    if (options_.shared && env_->FileSize(path).ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      index_.AddBlob(b, BlobFileBytes(b, tokens));
      written.push_back(b);
      return Status::Ok();
    }
    buf.clear();
    if (Status st = encode(); !st.ok()) return st;
    const std::string name = path.substr(path.rfind('/') + 1);
    const BlobHeader h{b.kind, fp, b.key, static_cast<uint64_t>(tokens), buf.size()};
    Status st = WriteBlobFile(env_, TmpPath(name), path, h, buf);
    if (st.code() == StatusCode::kNotFound) {  // the first blob of its XX/ subdirectory
      if (Status made = env_->MakeDirs(path.substr(0, path.rfind('/'))); !made.ok()) return made;
      st = WriteBlobFile(env_, TmpPath(name), path, h, buf);
    }
    if (!st.ok()) return st;
    const auto bytes = static_cast<int64_t>(disk::BlobFileBytes(buf.size()));
    std::lock_guard<std::mutex> lock(mu_);
    index_.AddBlob(b, bytes);
    stats_.bytes_written += bytes;
    written.push_back(b);
    return Status::Ok();
  };
  for (int64_t p = 0; p < chain.num_pages(); ++p) {
    const int64_t rows = PageRows(num_tokens, pt, p);
    Status st = write_blob({BlobKind::kPage, meta.pages[p]}, rows,
                           [&] { return codec_->EncodePage(*r.kv, p, rows, &buf); });
    if (!st.ok()) return fail(st);
  }
  for (const StateRef& s : meta.states) {
    const RecurrentBlob* blob = states.at(s.n).second;
    Status st = write_blob({BlobKind::kState, s.key}, s.n, [&] { return codec_->EncodeState(*blob, &buf); });
    if (!st.ok()) return fail(st);
  }

  const std::vector<uint8_t> file = EncodeEntry(meta);
  const std::string path = layout_.EntryPath(meta.file_id);
  const std::span<const uint8_t> parts[] = {file};
  if (Status st = env_->WriteAtomic(TmpPath(DirLayout::EntryName(meta.file_id)), path, parts); !st.ok()) {
    return fail(st);
  }

  std::unique_lock<std::mutex> lock(mu_);
  stats_.bytes_written += static_cast<int64_t>(file.size());
  if (inflight_cancelled_) {  // erased while being written
    lock.unlock();
    (void)env_->Remove(path);
    DeleteOrphans(written);
    return Status::Ok();
  }
  std::vector<BlobKey> orphans;
  std::optional<IndexedEntry> old = index_.Unpublish(r.id, &orphans);
  const int64_t now = WallMs();
  index_.Publish(r.id, {std::move(meta), static_cast<int64_t>(file.size()), now, ++use_seq_});
  lock.unlock();
  sharing = DirLock();  // published: a collector now sees the entry listing its blobs
  if (old) {
    (void)env_->Remove(layout_.EntryPath(old->meta.file_id));
    DeleteOrphans(orphans);
  }
  EnforceCap();
  return Status::Ok();
}

void FileDiskTier::DeleteOrphans(const std::vector<BlobKey>& blobs) {
  for (const BlobKey& b : blobs) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!index_.TakeOrphan(b)) continue;
    }
    // Shared: another process may list the blob; only the collector deletes.
    if (!options_.shared) (void)env_->Remove(BlobPath(b));
  }
}

void FileDiskTier::EnforceCap() {
  if (options_.shared) {
    bool over = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      over = index_.bytes() > options_.cap_bytes;
    }
    if (over) CollectShared();
    return;
  }
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    if (index_.bytes() <= options_.cap_bytes || index_.entries().empty()) return;
    const EntryId victim = index_.LruVictim();
    std::vector<BlobKey> orphans;
    std::optional<IndexedEntry> gone = index_.Unpublish(victim, &orphans);
    ++stats_.evictions;
    lock.unlock();
    (void)env_->Remove(layout_.EntryPath(gone->meta.file_id));
    DeleteOrphans(orphans);
  }
}

}  // namespace lineage::cache::disk
