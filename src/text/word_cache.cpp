#include "text/word_cache.h"

namespace lineage::text {

WordCache::Shard& WordCache::ShardFor(std::string_view word, size_t* hash) {
  *hash = std::hash<std::string_view>{}(word);
  return shards_[(*hash >> 7) % kShards];
}

bool WordCache::Lookup(std::string_view word, std::vector<TokenId>* out) {
  if (word.size() > kMaxWordBytes) return false;
  size_t h;
  Shard& s = ShardFor(word, &h);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(word);
  if (it == s.map.end()) return false;
  out->insert(out->end(), it->second.begin(), it->second.end());
  return true;
}

void WordCache::Insert(std::string_view word, const TokenId* ids, size_t n) {
  if (word.size() > kMaxWordBytes) return;
  size_t h;
  Shard& s = ShardFor(word, &h);
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.map.size() >= kEntriesPerShard) s.map.clear();
  s.map.emplace(std::string(word), std::vector<TokenId>(ids, ids + n));
}

}  // namespace lineage::text
