#include "server/kv_events/restorable_view.h"

namespace lineage::server {

std::vector<RestorablePrefix> RestorablePrefixes(const cache::LineageCache& cache, cache::disk::FileDiskTier* disk) {
  std::vector<RestorablePrefix> out;
  for (cache::LineageCache::EntryInfo& e : cache.Entries()) {
    const auto n = static_cast<int64_t>(e.tokens.size());
    out.push_back({std::move(e.tokens), n});
  }
  if (disk == nullptr) return out;
  for (cache::disk::StoredEntryInfo& e : disk->List()) {
    int64_t n = static_cast<int64_t>(e.tokens.size());
    if (!e.states.empty()) n = e.states.back().n;  // ascending: the longest restore point
    out.push_back({std::move(e.tokens), n});
  }
  return out;
}

}  // namespace lineage::server
