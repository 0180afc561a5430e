// A FileEnv that makes the Nth atomic write fail (SQLite's fault loops): with
// a full disk, with an I/O error, or torn (a truncated file lands at the final
// name and the call claims success, as a lying disk would). Optionally every
// later write fails too. Reads and deletions pass through. And a FileEnv
// whose reads stall while it is closed (a hung device).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "core/file_env.h"

namespace lineage::cache::disk::testing {

class FaultyEnv final : public ForwardingFileEnv {
 public:
  enum class Mode { kNoSpace, kIoError, kTorn };
  FaultyEnv(int64_t fail_at, Mode mode, bool persistent) : fail_at_(fail_at), mode_(mode), persistent_(persistent) {}

  Status WriteAtomic(const std::string& tmp, const std::string& path,
                     std::span<const std::span<const uint8_t>> parts) override {
    const int64_t n = ++writes_;
    const bool fail = n == fail_at_ || (persistent_ && n > fail_at_);
    if (!fail) return base()->WriteAtomic(tmp, path, parts);
    ++failures_;
    if (mode_ == Mode::kNoSpace) return ResourceExhausted(path + ": write: No space left on device");
    if (mode_ == Mode::kIoError) return IoError(path + ": write: Input/output error");
    std::vector<uint8_t> all;
    for (auto p : parts) all.insert(all.end(), p.begin(), p.end());
    all.resize(all.size() / 2);
    const std::span<const uint8_t> torn[] = {all};
    return base()->WriteAtomic(tmp, path, torn);
  }

  int64_t writes() const { return writes_; }
  int64_t failures() const { return failures_; }

 private:
  int64_t fail_at_;
  Mode mode_;
  bool persistent_;
  std::atomic<int64_t> writes_{0};
  std::atomic<int64_t> failures_{0};
};

// Holds every read while closed.
class StallingReadEnv final : public ForwardingFileEnv {
 public:
  void Set(bool open) {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = open;
    cv_.notify_all();
  }
  Status ReadAt(const std::string& path, uint64_t offset, uint64_t n, uint8_t* out) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
    lock.unlock();
    return base()->ReadAt(path, offset, n, out);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace lineage::cache::disk::testing
