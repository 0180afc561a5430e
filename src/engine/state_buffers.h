// Memory for recurrent states (recurrent_state.h): float arrays of a few to a
// few hundred MiB, allocated on every admission and snapshot.
//
// A fresh buffer of at least kPrefaultBytes is mapped and filled by the
// kernel in one call (MADV_POPULATE_WRITE) instead of one page fault per
// 4 KiB during the first write; a freed one is kept for reuse while fewer
// than kMaxKeptBuffers are kept, so a steady stream of warm turns allocates
// no new memory. A background thread keeps kReadyBuffers populated buffers
// of the last requested size in that list, so an admission whose states all
// went into the cache still finds one ready and pays only the copy (a fresh
// 19 MiB state costs ~8 ms of page population, the copy ~2-3 ms). These
// ready buffers are memory outside the cache's budget: at most
// kMaxKeptBuffers states. Smaller arrays come from operator new.
//
// Contents of a returned buffer are undefined. Thread-safety: both calls may
// run on any thread (one mutex).
#pragma once

#include <cstdint>

namespace lineage::engine {

constexpr int64_t kPrefaultBytes = int64_t{1} << 20;
constexpr int kMaxKeptBuffers = 4;
constexpr int kReadyBuffers = 2;

float* AcquireStateBuffer(int64_t num_floats);
void ReleaseStateBuffer(float* data, int64_t num_floats);

}  // namespace lineage::engine
