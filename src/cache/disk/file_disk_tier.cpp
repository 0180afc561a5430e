#include "cache/disk/file_disk_tier.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cache/disk/dir_scan.h"
#include "core/clock.h"
#include "cache/restore_search.h"

namespace lineage::cache::disk {

Result<std::unique_ptr<FileDiskTier>> FileDiskTier::Open(const FileDiskTierOptions& options,
                                                         std::shared_ptr<const StateCodec> codec) {
  if (options.dir.empty()) return InvalidArgument("disk tier: no directory given");
  if (!codec) return InvalidArgument("disk tier: no codec");
  FileEnv* env = options.env ? options.env : DefaultFileEnv();
  const DirLayout layout(options.dir);
  // A directory that holds anything a cache directory does not, or whose
  // own folders are links, is refused before anything in it is touched.
  if (Status st = env->MakeDirs(layout.root()); !st.ok()) return st.With("disk tier");
  if (Status st = CheckCacheDir(env, layout); !st.ok()) return st.With("disk tier");
  for (const std::string& d : {layout.tmp_dir(), layout.entries_dir(), layout.pages_dir(), layout.states_dir()}) {
    if (Status st = env->MakeDirs(d); !st.ok()) return st.With("disk tier");
  }
  Result<DirLock> lock =
      DirLock::Acquire(layout.lock_path(), options.shared ? LockMode::kShared : LockMode::kExclusive, false, env);
  if (!lock.ok()) return lock.status().With("disk tier");
  std::unique_ptr<FileDiskTier> tier(new FileDiskTier(options, std::move(codec), std::move(*lock)));
  if (Status st = tier->Rebuild(); !st.ok()) return st.With("disk tier: " + options.dir);
  tier->writer_ = std::thread([t = tier.get()] { t->WriterLoop(); });
  tier->reader_ = std::thread([t = tier.get()] { t->ReaderLoop(); });
  return tier;
}

FileDiskTier::FileDiskTier(const FileDiskTierOptions& options, std::shared_ptr<const StateCodec> codec,
                           DirLock lock)
    : options_(options),
      codec_(std::move(codec)),
      env_(options.env ? options.env : DefaultFileEnv()),
      layout_(options.dir),
      lock_(std::move(lock)),
      file_ids_(std::random_device{}() ^ (static_cast<uint64_t>(WallMs()) << 20) ^ static_cast<uint64_t>(::getpid())),
      tmp_tag_(file_ids_()) {}

FileDiskTier::~FileDiskTier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  {
    std::lock_guard<std::mutex> lock(reader_mu_);
    reader_stop_ = true;
  }
  reader_cv_.notify_all();
  if (reader_.joinable()) reader_.join();
}

void FileDiskTier::Log(const std::string& line) {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "disk cache: %s\n", line.c_str());
  }
}

Status FileDiskTier::Put(const DiskRecord& record) {
  if (record.tokens.empty() || !record.kv ||
      record.kv->num_tokens() != static_cast<int64_t>(record.tokens.size())) {
    return InvalidArgument("disk put: record KV length differs from its tokens");
  }
  auto rec = std::make_shared<const DiskRecord>(record);  // copied outside the lock
  std::unique_lock<std::mutex> lock(mu_);
  if (WritesDisabledLocked()) {
    ++counters_.dropped_writes;
    return ResourceExhausted("disk put: writes are disabled");
  }
  if (inflight_ == record.id) inflight_cancelled_ = false;
  for (Task& t : queue_) {
    if (t.kind == Task::kWrite && t.id == record.id) {
      t.record = std::move(rec);  // the newer version supersedes the queued one
      ++counters_.superseded_writes;
      return Status::Ok();
    }
  }
  if (queued_writes_ >= options_.max_pending_writes) DropPendingWriteLocked(*rec);
  queue_.push_back({Task::kWrite, record.id, std::move(rec), {}, {}});
  ++queued_writes_;
  lock.unlock();
  work_cv_.notify_one();
  return Status::Ok();
}

void FileDiskTier::DropPendingWriteLocked(const DiskRecord& incoming) {
  auto extends = [](const Tokens& longer, const Tokens& mine) {
    return longer.size() > mine.size() && std::equal(mine.begin(), mine.end(), longer.begin());
  };
  auto superseded = [&](const Task& t) {
    const Tokens& mine = t.record->tokens;
    if (extends(incoming.tokens, mine)) return true;
    for (const Task& o : queue_) {
      if (o.kind == Task::kWrite && &o != &t && extends(o.record->tokens, mine)) return true;
    }
    return false;
  };
  auto victim = queue_.end();
  for (auto pass : {0, 1, 2}) {
    for (auto it = queue_.begin(); it != queue_.end() && victim == queue_.end(); ++it) {
      if (it->kind != Task::kWrite) continue;
      if (pass == 0 && !superseded(*it)) continue;
      if (pass == 1 && it->record->anchor) continue;
      victim = it;
    }
  }
  if (victim == queue_.end()) return;
  queue_.erase(victim);
  --queued_writes_;
  ++counters_.dropped_writes;
}

bool FileDiskTier::WritesDisabledLocked() {
  if (disabled_until_ms_ == 0) return false;
  if (SteadyMs() < disabled_until_ms_) return true;
  disabled_until_ms_ = 0;
  counters_.writes_disabled = false;
  Log("writes enabled again");
  return false;
}

void FileDiskTier::DisableWrites(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counters_.failed_writes;
  if (disabled_until_ms_ != 0) return;
  disabled_until_ms_ = SteadyMs() + options_.disable_writes_ms;
  counters_.writes_disabled = true;
  ++counters_.times_disabled;
  // Queued writes would meet the same disk; they are dropped, deletions stay.
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->kind == Task::kWrite) {
      it = queue_.erase(it);
      --queued_writes_;
      ++counters_.dropped_writes;
    } else {
      ++it;
    }
  }
  Log("writes disabled for " + std::to_string(options_.disable_writes_ms / 1000) + " s after " + why.ToString() +
      "; entries stay in RAM only");
}

std::optional<DiskPoint> FileDiskTier::Lookup(TokenSpan prompt, int64_t longer_than, bool recurrent) {
  std::lock_guard<std::mutex> lock(mu_);
  const RestoreSearch found = FindRestorePoint(
      index_.tree(), prompt, recurrent,
      [&](EntryId id) {
        const IndexedEntry* e = index_.Find(id);
        return static_cast<uint64_t>(e->last_used_ms) << 16 | (e->use_seq & 0xffff);
      },
      {}, /*want_closest=*/false);
  if (found.best.entry == kNoEntry || found.best.n <= longer_than) return std::nullopt;
  return DiskPoint{found.best.entry, found.best.n, found.best.kind, index_.Find(found.best.entry)->meta.anchor};
}

int64_t FileDiskTier::SharedTokens(TokenSpan prompt) {
  std::lock_guard<std::mutex> lock(mu_);
  return index_.tree().Walk(prompt, static_cast<int64_t>(prompt.size()), [](const TreePoint&) {});
}

void FileDiskTier::Erase(EntryId entry) {
  std::unique_lock<std::mutex> lock(mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->kind == Task::kWrite && it->id == entry) {
      queue_.erase(it);
      --queued_writes_;
      break;
    }
  }
  if (inflight_ == entry) inflight_cancelled_ = true;
  std::vector<BlobKey> orphans;
  std::optional<IndexedEntry> gone = index_.Unpublish(entry, &orphans);
  if (!gone) return;
  queue_.push_back({Task::kCollect, entry, nullptr, layout_.EntryPath(gone->meta.file_id), std::move(orphans)});
  lock.unlock();
  work_cv_.notify_one();
}

bool FileDiskTier::Contains(EntryId entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.Find(entry) || (inflight_ == entry && !inflight_cancelled_)) return true;
  for (const Task& t : queue_) {
    if (t.kind == Task::kWrite && t.id == entry) return true;
  }
  return false;
}

DiskStats FileDiskTier::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  DiskStats s = stats_;
  s.entries = static_cast<int64_t>(index_.entries().size());
  s.anchors = index_.num_anchors();
  s.bytes = index_.bytes();
  s.budget_bytes = options_.cap_bytes;
  return s;
}

FileTierCounters FileDiskTier::Counters() {
  std::lock_guard<std::mutex> lock(mu_);
  FileTierCounters c = counters_;
  c.pending_writes = queued_writes_ + (inflight_ != kNoEntry ? 1 : 0);
  c.writes_disabled = disabled_until_ms_ != 0 && SteadyMs() < disabled_until_ms_;
  return c;
}

std::vector<StoredEntryInfo> FileDiskTier::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StoredEntryInfo> out;
  for (const auto& [id, e] : index_.entries()) {
    out.push_back({id, e.meta.file_id, e.meta.tokens, e.meta.states, e.meta.anchor, index_.EntryBytes(e), e.last_used_ms});
  }
  return out;
}

void FileDiskTier::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void FileDiskTier::Refresh(bool collect) {
  if (!options_.shared) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({collect ? Task::kRefreshCollect : Task::kRefresh, kNoEntry, nullptr, {}, {}});
  }
  work_cv_.notify_one();
  Flush();
}

int64_t FileDiskTier::BlobFileBytes(const BlobKey& blob, int64_t tokens) const {
  const int64_t payload = blob.kind == BlobKind::kPage ? codec_->page_payload_bytes(tokens) : codec_->state_bytes();
  return static_cast<int64_t>(disk::BlobFileBytes(static_cast<uint64_t>(payload)));
}

std::string FileDiskTier::BlobPath(const BlobKey& blob) const {
  return blob.kind == BlobKind::kPage ? layout_.PagePath(blob.key) : layout_.StatePath(blob.key);
}

}  // namespace lineage::cache::disk
