#include "engine/state_buffers.h"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
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
  std::vector<std::pair<float*, int64_t>> buffers;  // (data, bytes)
};

Kept& KeptBuffers() {
  static Kept* kept = new Kept;  // never destroyed: states may outlive static destruction order
  return *kept;
}

int64_t MappedBytes(int64_t num_floats) {
  const int64_t page = 4096;
  return (num_floats * 4 + page - 1) / page * page;
}

}  // namespace

float* AcquireStateBuffer(int64_t num_floats) {
  const int64_t bytes = num_floats * 4;
  if (bytes < kPrefaultBytes) return new float[static_cast<size_t>(std::max<int64_t>(num_floats, 1))];
  {
    Kept& k = KeptBuffers();
    std::lock_guard<std::mutex> lock(k.mu);
    auto it = std::find_if(k.buffers.begin(), k.buffers.end(), [&](const auto& b) { return b.second == bytes; });
    if (it != k.buffers.end()) {
      float* data = it->first;
      k.buffers.erase(it);
      return data;
    }
  }
  const size_t mapped = static_cast<size_t>(MappedBytes(num_floats));
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  (void)::madvise(p, mapped, MADV_POPULATE_WRITE);
  return static_cast<float*>(p);
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
