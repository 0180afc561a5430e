#include "cache/disk/dir_lock.h"

namespace lineage::cache::disk {

Result<DirLock> DirLock::Acquire(const std::string& lock_path, LockMode mode, bool wait, FileEnv* env) {
  Result<std::unique_ptr<FileLock>> lock = env->LockDir(lock_path, mode, wait);
  if (lock.ok()) return DirLock(std::move(lock).value());
  if (lock.status().code() != StatusCode::kResourceExhausted) return lock.status();
  return ResourceExhausted(lock_path + (mode == LockMode::kExclusive
                                            ? ": the directory is in use by another process"
                                            : ": the directory is owned by a process that does not share it"));
}

}  // namespace lineage::cache::disk
