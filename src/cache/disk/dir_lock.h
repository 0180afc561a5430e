// DirLock: the advisory lock (flock on DIR/LOCK) that lets one process at a
// time write a disk-tier directory. Released when the DirLock is destroyed or
// the process dies. Move-only.
#pragma once

#include <string>

#include "core/status.h"

namespace lineage::cache::disk {

class DirLock {
 public:
  static Result<DirLock> Acquire(const std::string& lock_path);
  DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirLock& operator=(DirLock&& o) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace lineage::cache::disk
