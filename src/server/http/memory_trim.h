// MemoryTrimmer: gives freed heap memory back to the system after requests.
//
// A request's body and its parsed JSON are many small allocations spread over
// the arena of whichever HTTP worker read it; freed, they stay in the arenas
// (glibc returns only the top of a heap), so a few large bodies left the
// process hundreds of MB above what it holds. After requests end, a
// background thread calls malloc_trim, which returns the free pages of every
// arena, at most once per `period` (it holds each arena's lock while it walks
// it, so it is not run per request).
// Thread-safe: NoteRequestEnded from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace lineage::server {

class MemoryTrimmer {
 public:
  explicit MemoryTrimmer(std::chrono::milliseconds period = std::chrono::milliseconds(1000));
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  void NoteRequestEnded() { dirty_.store(true, std::memory_order_relaxed); }
  int64_t trims() const { return trims_.load(); }

 private:
  void Loop();

  const std::chrono::milliseconds period_;
  std::atomic<bool> dirty_{false};
  std::atomic<int64_t> trims_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace lineage::server
