// Memory for recurrent states (recurrent_state.h): float arrays of a few to a
// few hundred MiB, allocated on every admission and snapshot.
//
// A fresh buffer of at least kPrefaultBytes is mapped and filled by the
// kernel in one call (MADV_POPULATE_WRITE) instead of one page fault per
// 4 KiB during the first write; a freed one is kept for reuse while fewer
// than kMaxKeptBuffers are kept, so a steady stream of warm turns allocates
// no new memory. Smaller arrays come from operator new.
//
// Contents of a returned buffer are undefined. Thread-safety: both calls may
// run on any thread (one mutex).
#pragma once

#include <cstdint>

namespace lineage::engine {

constexpr int64_t kPrefaultBytes = int64_t{1} << 20;
constexpr int kMaxKeptBuffers = 4;

float* AcquireStateBuffer(int64_t num_floats);
void ReleaseStateBuffer(float* data, int64_t num_floats);

}  // namespace lineage::engine
