// FileDiskTier: the DiskTier (disk_tier.h) that keeps entries in files and
// serves them across restarts (DESIGN.md §3.5, docs/disk-format.md).
//
// What it writes: content-addressed blobs — one file per KV page and per
// recurrent state, named by a key chained over the tokens — and one small
// entry file per entry listing its tokens and blob keys. Committing turn k+1
// of a conversation writes only the pages and states turn k did not have,
// plus the entry file. A record with whole_snapshot set shares nothing.
//
// Writes never run on the caller's thread: Put queues the record (holding its
// payload pointers) for one writer thread. At most max_pending_writes records
// wait; a Put into a full queue drops a pending write first — the oldest one
// a newer pending record extends (a superseded snapshot), else the oldest
// non-anchor, else the oldest. A Put for an id already queued replaces it.
// Every file goes tmp/ -> fsync -> rename -> fsync of the directory, blobs
// before the entry file that lists them, so a crash leaves at worst orphan
// blobs or temporary files. An entry becomes visible to Lookup / Load only
// once its entry file is renamed into place; a replaced version stays visible
// until then.
//
// Ids: the policy's EntryIds name entries of this run. Entries found on disk
// at start-up get ids from kRestoredIdBase upwards (the policy counts from 1),
// and every entry file is named by a random 64-bit file id, so two runs never
// collide.
//
// Failures: a write that fails with an I/O error or a full disk disables
// writes for disable_writes_ms (one log line); Puts meanwhile are dropped and
// the caller keeps serving from RAM. A blob or entry that fails a check on
// Load is reported (kCorrupt) and its entry is forgotten, never served. Erase
// forgets an entry at once and deletes, on the writer thread, its entry file
// and every blob no other entry references.
//
// Reads: Load runs its reads on the tier's reader thread and waits at most
// load_deadline_ms plus load_ms_per_gib per GiB it has to read. Past that it
// returns kIoError (one log line) and the caller prefills cold; until the read
// that overran finishes, later Loads fail at once instead of queueing behind
// it. Files are opened without blocking and must be regular files, so a FIFO
// named like a page or entry file is reported, never waited on.
//
// Byte cap: after each write, least recently used entries go (the entry
// file's mtime is the last use, updated by Load); anchors only when nothing
// else is left.
//
// Sharing (options.shared, docs/disk-format.md "Sharing a directory"):
// several processes serve one directory. Each holds DIR/LOCK shared; writes
// and restores hold DIR/COLLECT shared; blob files are deleted only by the
// collector, which holds DIR/COLLECT exclusive and enforces the cap over the
// whole directory. The writer thread rescans entries/ every rescan_ms, so
// entries another process wrote are served here, and entries it deleted are
// forgotten. A restore whose entry file has vanished fails as kNotFound
// ("gone"), never as damage.
//
// Thread-safety: every public method may be called from any thread. Index
// updates take one mutex; file reads in Load run outside it. Open takes an
// advisory lock on DIR/LOCK: exclusive (one tier per directory) unless shared.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>

#include "cache/disk/codec.h"
#include "cache/disk/dir_layout.h"
#include "cache/disk/dir_lock.h"
#include "cache/disk/disk_index.h"
#include "core/file_env.h"
#include "cache/disk_tier.h"

namespace lineage::cache::disk {

// 2^52: far above any count of this run's entries, and every id stays below
// 2^53, so a JSON reader that holds numbers as doubles (a browser reading
// /v1/cache/lineages) tells them apart.
inline constexpr EntryId kRestoredIdBase = EntryId{1} << 52;

struct FileDiskTierOptions {
  std::string dir;
  int64_t cap_bytes = int64_t{1} << 40;    // the seed's 1 TB
  int64_t max_pending_writes = 32;
  int64_t disable_writes_ms = 60'000;
  FileEnv* env = nullptr;                  // null: DefaultFileEnv()
  // A restore's reads may take this long plus load_ms_per_gib per GiB read
  // before Load gives up (the defaults allow 128 MiB/s).
  int64_t load_deadline_ms = 2'000;
  int64_t load_ms_per_gib = 8'000;
  // One line per event worth a human's attention; null: stderr.
  std::function<void(const std::string&)> log;
  // Several processes share the directory (each must set it).
  bool shared = false;
  int64_t rescan_ms = 500;       // shared: how often entries/ is listed
  int64_t collect_every = 20;    // shared: collect every this many rescans even under the cap
};

// Counters beyond DiskStats.
struct FileTierCounters {
  int64_t pending_writes = 0;
  int64_t dropped_writes = 0;     // queue full or writes disabled: lost
  int64_t superseded_writes = 0;  // a queued write replaced by its entry's newer version
  int64_t failed_writes = 0;
  int64_t times_disabled = 0;
  bool writes_disabled = false;
  int64_t corrupt_loads = 0;
  int64_t late_loads = 0;        // gave up at the deadline
  int64_t refused_loads = 0;     // failed at once while a late read still ran
  int64_t restored_entries = 0;  // found valid at start-up
  int64_t skipped_damaged = 0;   // entry files rejected at start-up
  int64_t skipped_foreign = 0;   // another model's or page size's entries
  int64_t startup_us = 0;
  // Shared directories only.
  int64_t rescans = 0;
  int64_t collections = 0;
  int64_t collections_deferred = 0;  // COLLECT was held by a reader or writer
  int64_t adopted_entries = 0;       // written by another process, found by a rescan
  int64_t vanished_entries = 0;      // deleted by another process, forgotten by a rescan
  int64_t gone_loads = 0;            // restores whose entry file had vanished
};

// One served entry, for tests and tools.
struct StoredEntryInfo {
  EntryId id = kNoEntry;
  uint64_t file_id = 0;
  Tokens tokens;
  std::vector<StateRef> states;
  bool anchor = false;
  int64_t bytes = 0;    // DiskIndex::EntryBytes
  int64_t used_ms = 0;  // wall clock of the last use (the entry file's mtime)
};

class FileDiskTier final : public DiskTier {
 public:
  // Creates the directory if needed, clears tmp/, rebuilds the index.
  static Result<std::unique_ptr<FileDiskTier>> Open(const FileDiskTierOptions& options,
                                                    std::shared_ptr<const StateCodec> codec);
  // Finishes the pending writes (unless writes are disabled), then stops;
  // waits for a read in progress on the reader thread.
  ~FileDiskTier() override;

  Status Put(const DiskRecord& record) override;
  std::optional<DiskPoint> Lookup(TokenSpan prompt, int64_t longer_than, bool recurrent) override;
  Result<DiskLoad> Load(EntryId entry, int64_t length) override;
  void Erase(EntryId entry) override;
  // Published, or queued / being written and not erased since.
  bool Contains(EntryId entry) override;
  int64_t SharedTokens(TokenSpan prompt) override;
  DiskStats Stats() override;

  // Blocks until every queued write and deletion has been carried out.
  void Flush();
  // Shared only: rescans entries/ now on the writer thread (and collects when
  // over the cap or `collect`), then returns. A no-op otherwise.
  void Refresh(bool collect = false);
  FileTierCounters Counters();
  std::vector<StoredEntryInfo> List();

 private:
  struct Task {
    enum Kind { kWrite, kCollect, kRefresh, kRefreshCollect } kind = kWrite;
    EntryId id = kNoEntry;
    std::shared_ptr<const DiskRecord> record;  // kWrite
    std::string entry_path;                    // kCollect: the erased entry's file
    std::vector<BlobKey> blobs;                // kCollect: orphan candidates
  };

  FileDiskTier(const FileDiskTierOptions& options, std::shared_ptr<const StateCodec> codec, DirLock lock);
  Status Rebuild();                       // tier_startup.cpp
  Result<DiskLoad> ReadLoad(EntryId entry, int64_t length);  // tier_load.cpp, on the reader thread
  void ReaderLoop();                      // tier_load.cpp
  void WriterLoop();                      // tier_writer.cpp
  Status WriteRecord(const Task& task);   // tier_writer.cpp
  void DeleteOrphans(const std::vector<BlobKey>& blobs);
  void EnforceCap();
  void Rescan();                          // tier_shared.cpp, shared, writer thread
  bool CollectShared();                   // tier_shared.cpp, shared, writer thread
  void RefreshShared(bool collect);       // Rescan, then CollectShared when due
  Result<DirLock> ShareCollectLock();     // tier_shared.cpp
  std::string TmpPath(const std::string& name) const { return layout_.TmpPath(name, tmp_tag_); }
  void DisableWrites(const Status& why);
  bool WritesDisabledLocked();
  void DropPendingWriteLocked(const DiskRecord& incoming);
  void Log(const std::string& line);
  int64_t BlobFileBytes(const BlobKey& blob, int64_t tokens) const;
  std::string BlobPath(const BlobKey& blob) const;

  FileDiskTierOptions options_;
  std::shared_ptr<const StateCodec> codec_;
  FileEnv* env_;
  DirLayout layout_;
  DirLock lock_;

  std::mutex mu_;
  std::condition_variable work_cv_;   // the writer waits for tasks
  std::condition_variable idle_cv_;   // Flush waits for an empty queue
  DiskIndex index_;
  std::deque<Task> queue_;
  int64_t queued_writes_ = 0;
  EntryId inflight_ = kNoEntry;       // the write being carried out
  bool inflight_cancelled_ = false;
  bool busy_ = false;
  bool stop_ = false;
  int64_t disabled_until_ms_ = 0;     // steady clock
  uint64_t use_seq_ = 0;
  EntryId next_restored_id_ = kRestoredIdBase;
  std::mt19937_64 file_ids_;
  uint64_t tmp_tag_ = 0;
  int64_t next_rescan_ms_ = 0;        // steady clock; shared only
  int64_t rescans_since_collect_ = 0;
  std::unordered_set<uint64_t> unreadable_files_;  // shared: entry files not to read again
  DiskStats stats_;
  FileTierCounters counters_;
  std::thread writer_;

  // The reader thread and its queue (reader_mu_ only; never held with mu_).
  std::mutex reader_mu_;
  std::condition_variable reader_cv_;
  std::deque<std::packaged_task<Result<DiskLoad>()>> reads_;
  bool reader_stop_ = false;
  bool reader_late_ = false;  // a read that overran its deadline still runs
  std::thread reader_;
};

}  // namespace lineage::cache::disk
