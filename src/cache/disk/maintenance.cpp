#include "cache/disk/maintenance.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "cache/disk/blob_file.h"
#include "cache/disk/dir_lock.h"

namespace lineage::cache::disk {
namespace {

struct BlobState {
  int64_t bytes = -1;   // -1: missing or unusable
  Status unusable;      // set when the file exists but cannot be used (a FIFO, ...)
  bool checked = false;
  bool good = true;
};

class BlobTable {
 public:
  BlobTable(FileEnv* env, const DirLayout& layout) : env_(env), layout_(layout) {}

  BlobState& Get(BlobKind kind, const Key128& key, bool verify) {
    auto& m = kind == BlobKind::kPage ? pages_ : states_;
    BlobState& s = m[key];
    const std::string path = kind == BlobKind::kPage ? layout_.PagePath(key) : layout_.StatePath(key);
    if (s.bytes < 0 && !s.checked) {
      Result<uint64_t> size = env_->FileSize(path);
      if (size.ok()) s.bytes = static_cast<int64_t>(*size);
      else if (size.status().code() != StatusCode::kNotFound) s.unusable = size.status();
      if (!verify) s.checked = true;
    }
    if (verify && !s.checked) {
      s.checked = true;
      Result<BlobHeader> h = s.unusable.ok() ? VerifyBlobFile(env_, path, kind) : Result<BlobHeader>(s.unusable);
      s.good = h.ok() && h->key == key;
    }
    return s;
  }

 private:
  FileEnv* env_;
  const DirLayout& layout_;
  std::unordered_map<Key128, BlobState, Key128Hash> pages_, states_;
};

EntryReport Inspect(const ScannedEntry& e, BlobTable& blobs, bool verify) {
  EntryReport r;
  r.entry = e;
  auto visit = [&](BlobKind kind, const Key128& key, const std::string& what) {
    BlobState& s = blobs.Get(kind, key, verify);
    if (!s.unusable.ok()) {
      ++r.bad_blobs;
      r.problems.push_back(what + " " + key.Hex() + " cannot be used: " + s.unusable.ToString());
    } else if (s.bytes < 0) {
      ++r.missing_blobs;
      r.problems.push_back(what + " " + key.Hex() + " is missing");
    } else {
      r.blob_bytes += s.bytes;
      if (verify && !s.good) {
        ++r.bad_blobs;
        r.problems.push_back(what + " " + key.Hex() + " fails its check");
      }
    }
  };
  for (const Key128& k : e.meta.pages) visit(BlobKind::kPage, k, "page");
  for (const StateRef& s : e.meta.states) visit(BlobKind::kState, s.key, "state");
  return r;
}

}  // namespace

Result<DirReport> InspectDir(FileEnv* env, const DirLayout& layout, bool verify_checksums) {
  if (Result<std::vector<DirEntry>> root = env->List(layout.root()); !root.ok()) return root.status();
  Result<DirScan> scan = ScanDir(env, layout);
  if (!scan.ok()) return scan.status();
  DirReport report;
  report.damaged = scan->damaged;
  report.unusable_entries = scan->unusable_entries;
  report.unusable_blobs = scan->unusable_blobs;
  report.tmp_files = scan->tmp_files;
  BlobTable blobs(env, layout);
  std::unordered_set<Key128, Key128Hash> listed_pages, listed_states;
  for (const ScannedEntry& e : scan->entries) {
    report.entries.push_back(Inspect(e, blobs, verify_checksums));
    listed_pages.insert(e.meta.pages.begin(), e.meta.pages.end());
    for (const StateRef& s : e.meta.states) listed_states.insert(s.key);
  }
  std::sort(report.entries.begin(), report.entries.end(),
            [](const EntryReport& a, const EntryReport& b) { return a.entry.mtime_ms > b.entry.mtime_ms; });
  auto count = [&](BlobKind kind, const std::unordered_set<Key128, Key128Hash>& present,
                   const std::unordered_set<Key128, Key128Hash>& listed) {
    for (const Key128& k : present) {
      const int64_t bytes = std::max<int64_t>(0, blobs.Get(kind, k, false).bytes);
      ++report.blob_files;
      report.blob_bytes += bytes;
      if (!listed.count(k)) {
        ++report.orphan_blobs;
        report.orphan_bytes += bytes;
      }
    }
  };
  count(BlobKind::kPage, scan->pages, listed_pages);
  count(BlobKind::kState, scan->states, listed_states);
  return report;
}

Result<GcReport> CollectGarbage(FileEnv* env, const DirLayout& layout, const std::optional<Key128>& keep_model,
                                bool remove_foreign) {
  Result<DirLock> lock = DirLock::Acquire(layout.lock_path(), LockMode::kExclusive, false, env);
  if (!lock.ok()) return lock.status();
  Result<DirReport> report = InspectDir(env, layout, /*verify_checksums=*/true);
  if (!report.ok()) return report.status();
  GcReport gc;
  auto remove = [&](const std::string& path) {
    Result<uint64_t> size = env->FileSize(path);
    if (env->Remove(path).ok() && size.ok()) gc.bytes_freed += static_cast<int64_t>(*size);
  };
  for (const std::string& tmp : report->tmp_files) {
    remove(tmp);
    ++gc.tmp_files;
  }
  for (const DamagedFile& d : report->damaged) {
    remove(d.path);
    ++gc.damaged_entries;
    gc.removed_why.push_back(d.why.message());
  }
  // A FIFO or link named like a blob or an entry goes (unlink removes the
  // name, never what a link points to); a folder so named stays, and says so.
  auto remove_unusable = [&](const std::vector<DamagedFile>& files, int64_t* count) {
    for (const DamagedFile& d : files) {
      if (env->Remove(d.path).ok()) {
        ++*count;
        gc.removed_why.push_back(d.why.message());
      } else {
        gc.skipped_why.push_back(d.why.message());
      }
    }
  };
  remove_unusable(report->unusable_blobs, &gc.unusable_blobs);
  remove_unusable(report->unusable_entries, &gc.damaged_entries);
  std::unordered_set<Key128, Key128Hash> keep_pages, keep_states;
  for (const EntryReport& e : report->entries) {
    const bool foreign = keep_model && !(e.entry.meta.fingerprint == *keep_model);
    if (!e.ok() || (foreign && remove_foreign)) {
      remove(e.entry.path);
      ++(e.ok() ? gc.foreign_entries : gc.damaged_entries);
      continue;
    }
    keep_pages.insert(e.entry.meta.pages.begin(), e.entry.meta.pages.end());
    for (const StateRef& s : e.entry.meta.states) keep_states.insert(s.key);
  }
  Result<DirScan> scan = ScanDir(env, layout);
  if (!scan.ok()) return scan.status();
  for (const Key128& k : scan->pages) {
    if (keep_pages.count(k)) continue;
    remove(layout.PagePath(k));
    ++gc.orphan_blobs;
  }
  for (const Key128& k : scan->states) {
    if (keep_states.count(k)) continue;
    remove(layout.StatePath(k));
    ++gc.orphan_blobs;
  }
  return gc;
}

}  // namespace lineage::cache::disk
