// Millisecond clocks: wall-clock time for moments people and files see (the
// disk tier's last-use times are file mtimes and must survive restarts; the
// cache page shows when an entry was last used), steady time for intervals
// that must not jump with the wall clock (the disk tier's write-disable window).
#pragma once

#include <chrono>
#include <cstdint>

namespace lineage {

inline int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Seconds from a to b, for timing work (benchmarks).
inline double SecondsBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

inline int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace lineage
