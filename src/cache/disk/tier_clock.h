// Clocks of the disk tier: wall-clock milliseconds for last-use times stored
// as file mtimes (they must survive restarts), steady milliseconds for the
// write-disable window (it must not jump with the wall clock).
#pragma once

#include <chrono>
#include <cstdint>

namespace lineage::cache::disk {

inline int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace lineage::cache::disk
