#include "sim/block_hashes.h"

#include <xxhash.h>

#include <algorithm>

namespace lineage::sim {

std::vector<uint64_t> ChainedBlockHashes(std::span<const Segment> seq, int64_t block_tokens, int64_t max_tokens) {
  std::vector<uint64_t> out;
  uint64_t parent = 0;
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, parent);
  int64_t in_block = 0, at = 0;
  for (const Segment& s : seq) {
    uint32_t offset = 0;
    while (offset < s.num_tokens) {
      int64_t take = std::min<int64_t>(s.num_tokens - offset, block_tokens - in_block);
      // A block's tokens are named by the segment pieces covering it.
      uint64_t piece[3] = {s.id, offset, static_cast<uint64_t>(take)};
      XXH64_update(st, piece, sizeof piece);
      offset += static_cast<uint32_t>(take);
      in_block += take;
      at += take;
      if (in_block == block_tokens) {
        if (at > max_tokens) break;
        parent = XXH64_digest(st);
        out.push_back(parent);
        XXH64_reset(st, parent);
        in_block = 0;
      }
    }
    if (at > max_tokens) break;
  }
  XXH64_freeState(st);
  return out;
}

}  // namespace lineage::sim
