// DirLock: an advisory lock (flock) on a directory of a disk tier, held on
// an open descriptor of the directory itself (DirLayout::lock_path,
// collect_lock_path), so deleting a file cannot release it. DIR is held
// exclusive by a server that owns the directory alone and by `lineage cache
// gc`, shared by every server of a shared directory; DIR/entries is held
// shared by readers and writers of a shared directory and exclusive by its
// collector (docs/disk-format.md, "Sharing a directory").
//
// Each Acquire opens its own file description, so two locks taken by two
// threads of one process conflict like locks of two processes. Released when
// the DirLock is destroyed or the process dies. Move-only. Taken through a
// FileEnv (FileEnv::LockDir), so fault injection reaches it.
#pragma once

#include <memory>
#include <string>

#include "core/file_env.h"
#include "core/status.h"

namespace lineage::cache::disk {

class DirLock {
 public:
  // `wait` false: kResourceExhausted at once when another holder conflicts.
  static Result<DirLock> Acquire(const std::string& lock_path, LockMode mode = LockMode::kExclusive,
                                 bool wait = false, FileEnv* env = DefaultFileEnv());
  DirLock() = default;  // holds nothing
  bool held() const { return lock_ != nullptr; }

 private:
  explicit DirLock(std::unique_ptr<FileLock> lock) : lock_(std::move(lock)) {}
  std::unique_ptr<FileLock> lock_;
};

}  // namespace lineage::cache::disk
