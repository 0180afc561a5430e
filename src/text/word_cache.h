// WordCache: pre-tokenized word (raw bytes) -> its BPE ids. Natural text
// repeats words, so most words skip BPE after their first appearance.
//
// The cache is per thread and lock-free: a direct-mapped table of 64-byte
// entries (about 1 MiB per thread that encodes), shared by every tokenizer
// that thread uses; entries carry their tokenizer's `owner` id, unique for
// the life of the process, so tokenizers never see each other's words.
// Words longer than 22 bytes or longer than 7 tokens are not cached.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/bpe.h"

namespace lineage::text {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 22;
  static constexpr size_t kMaxIds = 7;

  // A fresh owner id for a new tokenizer.
  static uint32_t NewOwner();

  // Appends the cached ids of `word` to `out` and returns true on a hit.
  static bool Lookup(uint32_t owner, std::string_view word, std::vector<TokenId>* out);
  static void Insert(uint32_t owner, std::string_view word, const TokenId* ids, size_t n);
};

}  // namespace lineage::text
