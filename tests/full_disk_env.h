// A FileEnv whose append files take `budget` bytes in all and then fail with
// a full disk (the bytes that fit are written, so the last line is torn, as
// on a real disk), and whose directory locks fail with an I/O error when
// `fail_locks` is set. Everything else passes through.
#pragma once

#include <memory>
#include <mutex>

#include "core/file_env.h"

namespace lineage::testing {

class FullDiskEnv final : public ForwardingFileEnv {
 public:
  explicit FullDiskEnv(int64_t budget, bool fail_locks = false) : budget_(budget), fail_locks_(fail_locks) {}

  Result<std::unique_ptr<AppendFile>> CreateAppend(const std::string& path) override {
    LINEAGE_ASSIGN_OR_RETURN(std::unique_ptr<AppendFile> file, base()->CreateAppend(path));
    return std::unique_ptr<AppendFile>(new Limited(this, std::move(file), path));
  }
  Result<std::unique_ptr<FileLock>> LockDir(const std::string& dir, LockMode mode, bool wait) override {
    if (fail_locks_) return IoError(dir + ": flock: Input/output error");
    return base()->LockDir(dir, mode, wait);
  }

 private:
  class Limited final : public AppendFile {
   public:
    Limited(FullDiskEnv* env, std::unique_ptr<AppendFile> file, std::string path)
        : env_(env), file_(std::move(file)), path_(std::move(path)) {}
    Status Append(std::string_view bytes) override {
      std::lock_guard<std::mutex> lock(env_->mu_);
      const int64_t fits = std::min<int64_t>(env_->budget_, static_cast<int64_t>(bytes.size()));
      env_->budget_ -= fits;
      if (fits > 0) LINEAGE_RETURN_IF_ERROR(file_->Append(bytes.substr(0, static_cast<size_t>(fits))));
      if (fits < static_cast<int64_t>(bytes.size())) return ResourceExhausted(path_ + ": write: No space left on device");
      return Status::Ok();
    }
    Status Sync() override { return file_->Sync(); }

   private:
    FullDiskEnv* env_;
    std::unique_ptr<AppendFile> file_;
    std::string path_;
  };

  std::mutex mu_;
  int64_t budget_;
  bool fail_locks_;
};

}  // namespace lineage::testing
