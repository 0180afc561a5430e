// A naive chunk matcher written from the definition, the oracle of the
// chunk-reuse tests (cache matcher and the server end to end).
#pragma once

#include <algorithm>
#include <vector>

#include "cache/chunk_match.h"

namespace lineage::cache::testing {

// From the definition: scan the cached tail once; at each cached position not
// already inside a taken chunk, the longest run equal to the prompt from its
// head is found by comparing ever longer prefixes; a run of at least
// min_run is taken.
inline std::vector<ReusedChunk> NaiveChunks(const Tokens& prompt, const Tokens& cached, int64_t min_run) {
  std::vector<ReusedChunk> out;
  if (min_run <= 0) return out;
  const auto np = static_cast<int64_t>(prompt.size()), nc = static_cast<int64_t>(cached.size());
  int64_t p = 0, taken_until = 0;
  for (int64_t c = 0; c < nc && p < np; ++c) {
    if (c < taken_until) continue;
    int64_t len = 0;
    while (p + len < np && c + len < nc &&
           std::equal(prompt.begin() + p, prompt.begin() + p + len + 1, cached.begin() + c)) {
      ++len;
    }
    if (len >= min_run) {
      out.push_back({c, p, len});
      p += len;
      taken_until = c + len;
    }
  }
  return out;
}

}  // namespace lineage::cache::testing
