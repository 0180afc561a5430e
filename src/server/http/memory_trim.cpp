#include "server/http/memory_trim.h"

#include <malloc.h>

namespace lineage::server {

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds period) : period_(period) {
  thread_ = std::thread([this] { Loop(); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void MemoryTrimmer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period_, [this] { return stop_; })) {
    if (!dirty_.exchange(false, std::memory_order_relaxed)) continue;
    lock.unlock();
    ::malloc_trim(0);
    trims_.fetch_add(1);
    lock.lock();
  }
}

}  // namespace lineage::server
