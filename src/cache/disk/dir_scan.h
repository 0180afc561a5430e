// DirScan: one pass over a disk-tier directory — every entry file parsed (of
// any model), the keys of every blob file present, the temporary files left
// by a crash. The tier rebuilds its index from it at start-up and
// `lineage cache` reports from it; neither trusts a file that fails a check.
//
// Thread-safety: a pure function of the directory's contents.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "cache/disk/dir_layout.h"
#include "cache/disk/entry_file.h"
#include "core/file_env.h"

namespace lineage::cache::disk {

struct ScannedEntry {
  std::string path;
  EntryMeta meta;
  int64_t file_bytes = 0;
  int64_t mtime_ms = 0;   // last use
};

struct DamagedFile {
  std::string path;
  Status why;
};

struct DirScan {
  std::vector<ScannedEntry> entries;  // parsed, any fingerprint
  std::vector<DamagedFile> damaged;   // entry files that failed a check (regular files: removable)
  // Named like an entry but not a regular file (a directory, a FIFO, a
  // link): never read and never removed, only reported.
  std::vector<DamagedFile> unusable_entries;
  std::unordered_set<Key128, Key128Hash> pages;   // regular files present by name
  std::unordered_set<Key128, Key128Hash> states;  // regular files present by name
  // Named like a page or state but not a regular file (a FIFO, a device, a
  // directory, a symlink that loops): never opened, counted as missing.
  std::vector<DamagedFile> unusable_blobs;
  std::vector<std::string> tmp_files;             // paths of the temporary files a tier wrote
};

// InvalidArgument unless the directory's top holds only a cache
// directory's names (DirLayout::IsOwnTopName) and its folders are real
// folders, not symbolic links. Every scan starts with it; the tier refuses
// to open, and `lineage cache` to touch, a directory that fails it.
Status CheckCacheDir(FileEnv* env, const DirLayout& layout);

// A missing directory scans as empty. I/O errors on the directories
// themselves are returned; a file that cannot be read is `damaged`. Entry
// files are read header first: a file whose size differs from what its header
// declares is rejected after 80 bytes. Nothing that is not a regular file is
// opened, so a scan never blocks on a FIFO.
Result<DirScan> ScanDir(FileEnv* env, const DirLayout& layout);

// Number of rows page p of an entry of `num_tokens` holds.
inline int64_t PageRows(int64_t num_tokens, int64_t page_tokens, int64_t p) {
  return std::min(page_tokens, num_tokens - p * page_tokens);
}

}  // namespace lineage::cache::disk
