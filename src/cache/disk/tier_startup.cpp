// FileDiskTier::Rebuild: the index from the directory at start-up. Temporary
// files are deleted; damaged entry files and entries whose blobs are missing
// are skipped with one log line each; other models' entries are counted and
// left alone (with their blobs); blobs no entry lists are deleted by the
// writer thread. In a shared directory other processes may be writing: their
// temporary files and blobs not yet listed are left to the collector.
#include <chrono>
#include <unordered_set>

#include "cache/disk/dir_scan.h"
#include "cache/disk/file_disk_tier.h"

namespace lineage::cache::disk {

Status FileDiskTier::Rebuild() {
  const auto t0 = std::chrono::steady_clock::now();
  // Shared: no collector deletes a blob while the scan pairs entries with blobs.
  DirLock sharing;
  if (options_.shared) {
    Result<DirLock> l = ShareCollectLock();
    if (!l.ok()) return l.status();
    sharing = std::move(*l);
  }
  Result<DirScan> scan = ScanDir(env_, layout_);
  if (!scan.ok()) return scan.status();
  if (!options_.shared) {
    for (const std::string& tmp : scan->tmp_files) (void)env_->Remove(tmp);
  }
  for (const std::vector<DamagedFile>* list : {&scan->damaged, &scan->unusable_entries})
    for (const DamagedFile& d : *list) {
      Log("skipping " + d.why.ToString());
      ++counters_.skipped_damaged;
    }
  // Never opened: an entry that lists one is skipped below as incomplete.
  for (const DamagedFile& d : scan->unusable_blobs) Log("skipping " + d.why.ToString());

  const Key128& fp = codec_->fingerprint();
  const int64_t pt = codec_->page_tokens();
  std::unordered_set<Key128, Key128Hash> foreign_pages, foreign_states;
  std::string first_foreign;
  for (ScannedEntry& s : scan->entries) {
    EntryMeta& m = s.meta;
    if (!(m.fingerprint == fp) || m.page_tokens != pt) {
      if (first_foreign.empty()) first_foreign = s.path;
      ++counters_.skipped_foreign;
      foreign_pages.insert(m.pages.begin(), m.pages.end());
      for (const StateRef& st : m.states) foreign_states.insert(st.key);
      continue;
    }
    bool complete = true;
    for (const Key128& k : m.pages) complete = complete && scan->pages.count(k);
    for (const StateRef& st : m.states) complete = complete && scan->states.count(st.key);
    if (!complete && options_.shared) continue;  // blobs listed before another writer finished; a rescan adopts it
    if (!complete) {
      Log("skipping " + s.path + ": a page or state file it lists is missing or not a regular file");
      ++counters_.skipped_damaged;
      continue;
    }
    const auto num_tokens = static_cast<int64_t>(m.tokens.size());
    for (int64_t p = 0; p < static_cast<int64_t>(m.pages.size()); ++p) {
      const int64_t rows = PageRows(num_tokens, pt, p);
      index_.AddBlob({BlobKind::kPage, m.pages[p]}, BlobFileBytes({BlobKind::kPage, {}}, rows));
    }
    for (const StateRef& st : m.states) index_.AddBlob({BlobKind::kState, st.key}, BlobFileBytes({BlobKind::kState, {}}, 0));
    const int64_t mtime = s.mtime_ms;
    index_.Publish(next_restored_id_++, {std::move(m), s.file_bytes, mtime, 0});
    ++counters_.restored_entries;
  }
  if (counters_.skipped_foreign > 0) {
    Log("skipping " + std::to_string(counters_.skipped_foreign) + " entry files of another model or page size (first: " +
        first_foreign + ")");
  }

  sharing = DirLock();
  // Orphans (a crash between blobs and their entry, or an entry skipped above).
  // Shared: left to the collector (another process may be about to list them).
  Task sweep{Task::kCollect, kNoEntry, nullptr, {}, {}};
  if (options_.shared) {
    scan->pages.clear();
    scan->states.clear();
  }
  for (const Key128& k : scan->pages) {
    if (index_.HasBlob({BlobKind::kPage, k}) || foreign_pages.count(k)) continue;
    index_.AddBlob({BlobKind::kPage, k}, 0);
    sweep.blobs.push_back({BlobKind::kPage, k});
  }
  for (const Key128& k : scan->states) {
    if (index_.HasBlob({BlobKind::kState, k}) || foreign_states.count(k)) continue;
    index_.AddBlob({BlobKind::kState, k}, 0);
    sweep.blobs.push_back({BlobKind::kState, k});
  }
  if (!sweep.blobs.empty()) queue_.push_back(std::move(sweep));

  counters_.startup_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  EnforceCap();
  return Status::Ok();
}

}  // namespace lineage::cache::disk
