// Overflow-checked size arithmetic for values read from files.
//
// Every count, shape and offset a loader reads is untrusted: products and
// sums of them go through these helpers, which report overflow instead of
// wrapping (unsigned) or invoking undefined behaviour (signed).
#pragma once

#include <cstdint>
#include <optional>

namespace lineage {

// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// True when [offset, offset + bytes) lies inside [0, limit) without wrapping.
inline bool RangeInside(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

}  // namespace lineage
