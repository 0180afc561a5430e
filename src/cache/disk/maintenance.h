// Offline maintenance of a disk-tier directory, for `lineage cache`:
// a report of what is stored (entries of every model, their sizes and last
// use, missing or damaged blobs, orphans, temporary files), checksum
// verification, and garbage collection.
//
// Thread-safety: functions of the directory; CollectGarbage takes the
// directory's lock, so it refuses to run beside a server using it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/disk/dir_scan.h"

namespace lineage::cache::disk {

struct EntryReport {
  ScannedEntry entry;
  int64_t blob_bytes = 0;     // its pages and states (shared ones counted here too)
  int64_t missing_blobs = 0;
  int64_t bad_blobs = 0;      // not a regular file, or fail a check (checked only when verifying)
  std::vector<std::string> problems;
  bool ok() const { return missing_blobs == 0 && bad_blobs == 0; }
};

struct DirReport {
  std::vector<EntryReport> entries;  // sorted by last use, newest first
  std::vector<DamagedFile> damaged;  // entry files that fail a check
  std::vector<DamagedFile> unusable_entries;  // named like an entry, not a regular file: only reported
  std::vector<DamagedFile> unusable_blobs;  // named like a blob, not a regular file
  int64_t blob_files = 0;
  int64_t blob_bytes = 0;            // every blob once
  int64_t orphan_blobs = 0;          // listed by no entry
  int64_t orphan_bytes = 0;
  std::vector<std::string> tmp_files;
};

// `verify_checksums` reads every blob an entry lists; otherwise only sizes.
Result<DirReport> InspectDir(FileEnv* env, const DirLayout& layout, bool verify_checksums);

struct GcReport {
  int64_t tmp_files = 0;
  int64_t damaged_entries = 0;   // unreadable, or listing a missing or damaged blob
  int64_t foreign_entries = 0;   // only when a model was named and remove_foreign
  int64_t orphan_blobs = 0;
  int64_t unusable_blobs = 0;    // named like a blob but not a regular file (removed)
  int64_t bytes_freed = 0;
  std::vector<std::string> removed_why;  // one line per damaged or unusable file removed
  std::vector<std::string> skipped_why;  // one line per file named like ours that could not or must not go
};

// Removes temporary files, damaged entry files (and entries whose blobs are
// missing or fail their checksum), files named like blobs that are not
// regular files, other models' entries if `keep_model` is
// given and `remove_foreign`, and then every blob no remaining entry lists.
Result<GcReport> CollectGarbage(FileEnv* env, const DirLayout& layout, const std::optional<Key128>& keep_model,
                                bool remove_foreign);

}  // namespace lineage::cache::disk
