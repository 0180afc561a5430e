// Chunk matching for cache reuse by KV shifting (DESIGN.md §3.7): which runs
// of a new prompt reappear later in a stored sequence, walked the way
// llama-server's `--cache-reuse N` walks them.
//
// Both sequences start right after their common prefix. Two heads move
// forward: at (prompt head p, cached head c) the run of equal elements is
// measured; if it weighs at least `min_run_weight` it becomes one chunk and
// both heads move past it, otherwise only the cached head moves on by one
// (that element was deleted from the prompt, or never matched).
//
// Invariants of the result: the prompt head moves only over chunks, so the
// chunks tile prompt_tail[0, total) in order without gaps (chunk i's dst is
// the sum of the earlier lens); src is strictly ascending and chunks never
// overlap in the cached tail; every chunk weighs at least min_run_weight.
// A min_run_weight <= 0 turns reuse off (no chunks).
//
// The policy is written once: the server runs it on token ids, the
// simulator's llama-server baseline on trace segments (weight = their token
// count). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cache/cache_types.h"

namespace lineage::cache {

struct ReusedChunk {
  int64_t src = 0;  // first element in the cached tail
  int64_t dst = 0;  // first element in the prompt tail
  int64_t len = 0;  // elements
  bool operator==(const ReusedChunk&) const = default;
};

// `same(a, b)` compares a prompt element with a cached one; `weight(x)` is
// what an element counts towards a run (1 for a token).
template <typename T, typename Same, typename Weight>
std::vector<ReusedChunk> MatchChunks(std::span<const T> prompt_tail, std::span<const T> cached_tail,
                                     int64_t min_run_weight, Same same, Weight weight) {
  std::vector<ReusedChunk> chunks;
  if (min_run_weight <= 0) return chunks;
  const size_t np = prompt_tail.size(), nc = cached_tail.size();
  size_t p = 0, c = 0;
  while (p < np && c < nc) {
    size_t run = 0;
    int64_t run_weight = 0;
    while (p + run < np && c + run < nc && same(prompt_tail[p + run], cached_tail[c + run])) {
      run_weight += weight(prompt_tail[p + run]);
      ++run;
    }
    if (run > 0 && run_weight >= min_run_weight) {
      chunks.push_back({static_cast<int64_t>(c), static_cast<int64_t>(p), static_cast<int64_t>(run)});
      p += run;
      c += run;
    } else {
      ++c;
    }
  }
  return chunks;
}

// The token form the server uses.
std::vector<ReusedChunk> MatchTokenChunks(TokenSpan prompt_tail, TokenSpan cached_tail, int64_t min_run_tokens);

// Drops chunk elements past the first `max_len` (the last kept chunk is
// shortened): a restore must leave at least one prompt token to compute.
void CapChunks(std::vector<ReusedChunk>& chunks, int64_t max_len);

// Sum of the chunks' lens.
int64_t ChunkElements(std::span<const ReusedChunk> chunks);

}  // namespace lineage::cache
