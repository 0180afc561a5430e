#include "cache/disk/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lineage::cache::disk {

Result<DirLock> DirLock::Acquire(const std::string& lock_path, LockMode mode, bool wait) {
  // The lock is on the directory's own open description: no file that
  // someone could delete (a second owner would then lock a new one).
  const int fd = ::open(lock_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError(lock_path + ": open: " + std::strerror(errno));
  const int op = (mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
  int rc = 0;
  while ((rc = ::flock(fd, op)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    const int err = errno;
    ::close(fd);
    if (err != EWOULDBLOCK) return IoError(lock_path + ": flock: " + std::strerror(err));
    return ResourceExhausted(lock_path + (mode == LockMode::kExclusive
                                              ? ": the directory is in use by another process"
                                              : ": the directory is owned by a process that does not share it"));
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
