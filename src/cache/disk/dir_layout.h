// Where each file of the disk tier lives inside its directory
// (docs/disk-format.md, "Directory"):
//   DIR/tmp/, DIR/entries/<16 hex>.ent, DIR/pages/<2 hex>/<32 hex>.kvp,
//   DIR/states/<2 hex>/<32 hex>.rst
// The ownership lock is held on DIR itself and the collection lock on
// DIR/entries (directories a process keeps open: deleting a file cannot
// release them); LOCK and COLLECT files left by earlier versions are ours.
// Thread-safety: immutable value.
#pragma once

#include <cstdint>
#include <string>

#include "cache/disk/format.h"

namespace lineage::cache::disk {

class DirLayout {
 public:
  explicit DirLayout(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string lock_path() const { return root_; }
  std::string collect_lock_path() const { return entries_dir(); }
  std::string tmp_dir() const { return root_ + "/tmp"; }
  std::string entries_dir() const { return root_ + "/entries"; }
  std::string pages_dir() const { return root_ + "/pages"; }
  std::string states_dir() const { return root_ + "/states"; }

  std::string EntryPath(uint64_t file_id) const;
  std::string PagePath(const Key128& key) const { return BlobPath(pages_dir(), key, ".kvp"); }
  std::string StatePath(const Key128& key) const { return BlobPath(states_dir(), key, ".rst"); }
  // A temporary name for `final_name` written by the process tagged
  // `writer_tag` (random per tier), so two processes sharing the directory
  // never write one temporary file.
  std::string TmpPath(const std::string& final_name, uint64_t writer_tag) const;

  static std::string EntryName(uint64_t file_id);
  // "0123456789abcdef.ent" -> file id; false for any other name.
  static bool ParseEntryName(const std::string& name, uint64_t* file_id);
  // "<32 hex>.kvp" / ".rst" -> key; false for any other name.
  static bool ParseBlobName(const std::string& name, const char* suffix, Key128* key);
  // True for a name TmpPath makes: an entry or blob name, a dot, 16 hex
  // digits and ".tmp". Nothing else in DIR/tmp is ever removed.
  static bool IsTmpName(const std::string& name);
  // True for the names a cache directory may hold at its top.
  static bool IsOwnTopName(const std::string& name);

 private:
  static std::string BlobPath(const std::string& dir, const Key128& key, const char* suffix);
  std::string root_;
};

}  // namespace lineage::cache::disk
