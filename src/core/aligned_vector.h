// AlignedVector<T>: a std::vector whose storage starts on a 64-byte (cache
// line, AVX-512 register) boundary, for buffers the kernels read with full
// 512-bit loads: an unaligned one crosses a line in every load and costs
// two. Same ownership and thread-safety as std::vector.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace lineage {

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace lineage
