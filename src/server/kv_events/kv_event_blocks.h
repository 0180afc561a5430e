// The restorable-prefix block set that KV events publish (docs/kv-events.md):
// a replica's restorable prefixes cut into blocks of `block_tokens` tokens,
// each named by a hash chained over the tokens from the start, as vLLM's
// prefix-cache blocks are. Block j of a prefix is in the set only when the
// prefix is restorable at length >= (j + 1) * block_tokens: a partial last
// block is never named, and no block past the last restore point of its
// lineage is.
//
// Hashes: h(-1) absent; h(j) = XXH3-64 seeded 0 over u64 h(j-1) (0 for j = 0)
// followed by the block's token ids as u32, little-endian.
//
// Thread-safety: pure functions and a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/cache_types.h"

namespace lineage::server {

// tokens[0, length) can be restored by this replica.
struct RestorablePrefix {
  cache::Tokens tokens;
  int64_t length = 0;
};

struct KvBlock {
  std::optional<uint64_t> parent;  // absent for the first block
  std::vector<uint32_t> tokens;    // block_tokens ids
  int64_t depth = 0;               // j: the block covers tokens [j*B, (j+1)*B)
};

// hash -> block, for every full block of every prefix.
using KvBlockSet = std::unordered_map<uint64_t, KvBlock>;

uint64_t KvBlockHash(std::optional<uint64_t> parent, const uint32_t* tokens, int64_t block_tokens);
KvBlockSet BlocksOf(const std::vector<RestorablePrefix>& prefixes, int64_t block_tokens);

}  // namespace lineage::server
