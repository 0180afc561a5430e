#include "cache/chunk_match.h"

#include <algorithm>

namespace lineage::cache {

std::vector<ReusedChunk> MatchTokenChunks(TokenSpan prompt_tail, TokenSpan cached_tail, int64_t min_run_tokens) {
  return MatchChunks(
      prompt_tail, cached_tail, min_run_tokens, [](TokenId a, TokenId b) { return a == b; },
      [](TokenId) { return int64_t{1}; });
}

void CapChunks(std::vector<ReusedChunk>& chunks, int64_t max_len) {
  int64_t kept = 0;
  size_t i = 0;
  for (; i < chunks.size() && kept < max_len; ++i) {
    chunks[i].len = std::min(chunks[i].len, max_len - kept);
    kept += chunks[i].len;
  }
  chunks.resize(i);
}

int64_t ChunkElements(std::span<const ReusedChunk> chunks) {
  int64_t n = 0;
  for (const ReusedChunk& c : chunks) n += c.len;
  return n;
}

}  // namespace lineage::cache
