#include "engine/state_buffers.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <new>
#include <utility>
#include <vector>

namespace lineage::engine {
namespace {

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it and fault lazily
#endif

struct Kept {
  std::mutex mu;
  std::condition_variable wake;                     // the refiller waits here
  std::vector<std::pair<float*, int64_t>> buffers;  // (data, bytes)
  int64_t ready_bytes = 0;                          // size the refiller keeps ready; 0: none yet
  bool refiller_started = false;
};

Kept& KeptBuffers() {
  static Kept* kept = new Kept;  // never destroyed: states may outlive static destruction order
  return *kept;
}

constexpr int kRefillDelayMs = 20;

int64_t MappedBytes(int64_t num_floats) {
  const int64_t page = 4096;
  return (num_floats * 4 + page - 1) / page * page;
}

float* MapPopulated(int64_t num_floats) {
  const size_t mapped = static_cast<size_t>(MappedBytes(num_floats));
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  (void)::madvise(p, mapped, MADV_POPULATE_WRITE);
  return static_cast<float*>(p);
}

int CountKept(const Kept& k, int64_t bytes) {
  return static_cast<int>(std::count_if(k.buffers.begin(), k.buffers.end(), [&](const auto& b) { return b.second == bytes; }));
}

// Keeps kReadyBuffers populated buffers of the last requested size in the
// kept list, off the admission path.
void RefillLoop(Kept& k) {
  std::unique_lock<std::mutex> lock(k.mu);
  for (;;) {
    k.wake.wait(lock, [&] {
      return k.ready_bytes > 0 && CountKept(k, k.ready_bytes) < kReadyBuffers &&
             static_cast<int>(k.buffers.size()) < kMaxKeptBuffers;
    });
    const int64_t bytes = k.ready_bytes;
    lock.unlock();
    // Let the admission that took a buffer finish its copy first: populating
    // beside it halves the copy's memory bandwidth.
    std::this_thread::sleep_for(std::chrono::milliseconds(kRefillDelayMs));
    float* fresh = MapPopulated(bytes / 4);
    lock.lock();
    if (fresh == nullptr) {
      k.ready_bytes = 0;  // out of memory: stop refilling until the next request
      continue;
    }
    if (static_cast<int>(k.buffers.size()) < kMaxKeptBuffers) {
      k.buffers.emplace_back(fresh, bytes);
    } else {
      ::munmap(fresh, static_cast<size_t>(MappedBytes(bytes / 4)));
    }
  }
}

}  // namespace

float* AcquireStateBuffer(int64_t num_floats) {
  const int64_t bytes = num_floats * 4;
  if (bytes < kPrefaultBytes) return new float[static_cast<size_t>(std::max<int64_t>(num_floats, 1))];
  {
    Kept& k = KeptBuffers();
    std::lock_guard<std::mutex> lock(k.mu);
    k.ready_bytes = bytes;
    if (!k.refiller_started) {
      k.refiller_started = true;
      std::thread([&k] { RefillLoop(k); }).detach();
    }
    auto it = std::find_if(k.buffers.begin(), k.buffers.end(), [&](const auto& b) { return b.second == bytes; });
    if (it != k.buffers.end()) {
      float* data = it->first;
      k.buffers.erase(it);
      k.wake.notify_one();
      return data;
    }
    k.wake.notify_one();
  }
  float* p = MapPopulated(num_floats);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void ReleaseStateBuffer(float* data, int64_t num_floats) {
  if (data == nullptr) return;
  const int64_t bytes = num_floats * 4;
  if (bytes < kPrefaultBytes) {
    delete[] data;
    return;
  }
  {
    Kept& k = KeptBuffers();
    std::lock_guard<std::mutex> lock(k.mu);
    if (static_cast<int>(k.buffers.size()) < kMaxKeptBuffers) {
      k.buffers.emplace_back(data, bytes);
      return;
    }
  }
  ::munmap(data, static_cast<size_t>(MappedBytes(num_floats)));
}

}  // namespace lineage::engine
