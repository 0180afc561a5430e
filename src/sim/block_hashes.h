// Chained block hashes: the names a paged prefix cache (vLLM, oMLX) gives to
// the full fixed-size token blocks of a sequence. Block k's hash covers block
// k-1's hash and block k's own tokens, so equal hashes mean equal token
// prefixes and a changed head renames every later block.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/trace.h"

namespace lineage::sim {

// Chained hashes of the full `block_tokens` blocks of `seq` that end at or
// before `max_tokens`. Equal hashes mean equal token prefixes.
std::vector<uint64_t> ChainedBlockHashes(std::span<const Segment> seq, int64_t block_tokens, int64_t max_tokens);

}  // namespace lineage::sim
