#include "cache/disk/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lineage::cache::disk {

Result<DirLock> DirLock::Acquire(const std::string& lock_path) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(lock_path + ": open: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return ResourceExhausted(lock_path + ": the directory is in use by another process");
  }
  return DirLock(fd);
}

DirLock& DirLock::operator=(DirLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace lineage::cache::disk
