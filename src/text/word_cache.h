// WordCache: pre-tokenized word (raw bytes) -> its BPE ids. Natural text
// repeats words, so most words skip BPE after their first appearance.
//
// The cache is a direct-mapped table of 64-byte entries (about 1 MiB), held
// by one encode at a time and lock-free while held: an encode takes a table
// from the process's free ones for its Scope and gives it back after, so
// the tables number the encodes that ever ran at once (a server's 70 HTTP
// workers each keeping a table of its own held 70 MiB). Every tokenizer
// shares them; entries carry their tokenizer's `owner` id, unique for the
// life of the process, so tokenizers never see each other's words. Outside a
// Scope nothing is cached.
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

  // Holds a table for the calling thread while it lives; nested scopes share
  // the outer one's.
  class Scope {
   public:
    Scope();
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    bool holds_ = false;
  };

  // Tables made so far: the most encodes that ever ran at once.
  static size_t TableCount();

  // A fresh owner id for a new tokenizer.
  static uint32_t NewOwner();

  // Appends the cached ids of `word` to `out` and returns true on a hit.
  static bool Lookup(uint32_t owner, std::string_view word, std::vector<TokenId>* out);
  static void Insert(uint32_t owner, std::string_view word, const TokenId* ids, size_t n);
};

}  // namespace lineage::text
