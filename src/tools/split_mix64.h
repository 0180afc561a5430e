// SplitMix64: a tiny deterministic random generator for the synthetic
// vocabulary and corpus. Their output must depend only on the seed, never on
// the standard library's distributions, which differ between versions.
// Not thread-safe (plain value type).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lineage::text {

struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
};

}  // namespace lineage::text
