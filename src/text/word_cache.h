// WordCache: pre-tokenized word (raw bytes) -> its BPE ids, shared by every
// thread that encodes with one tokenizer. Natural text repeats words, so
// most words skip BPE after the first time.
//
// Thread-safe: 64 shards, each behind its own mutex; a shard that reaches
// its capacity is emptied (cheap, and a real vocabulary's hot words come
// straight back). Long words are not cached.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe.h"

namespace lineage::text {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 48;
  static constexpr size_t kShards = 64;
  static constexpr size_t kEntriesPerShard = 8192;

  // Appends the cached ids of `word` to `out` and returns true on a hit.
  bool Lookup(std::string_view word, std::vector<TokenId>* out);
  void Insert(std::string_view word, const TokenId* ids, size_t n);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<TokenId>, Hash, std::equal_to<>> map;
  };
  Shard& ShardFor(std::string_view word, size_t* hash);
  std::array<Shard, kShards> shards_;
};

}  // namespace lineage::text
