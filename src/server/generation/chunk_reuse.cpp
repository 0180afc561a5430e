#include "server/generation/chunk_reuse.h"

#include <algorithm>
#include <vector>

#include "cache/chunk_match.h"
#include "engine/kv_shift.h"

namespace lineage::server {

int64_t ChunkReuse::Apply(std::span<const int32_t> prompt, const cache::LookupResult& lookup,
                          engine::Sequence& seq) const {
  const cache::RestorePoint& rp = lookup.restore;
  const auto m = static_cast<int64_t>(prompt.size());
  const int64_t r = seq.num_tokens();
  if (min_run_tokens_ <= 0 || rp.entry == cache::kNoEntry || rp.tier != cache::Tier::kRam) return 0;
  if (m - 1 - r <= 0) return 0;
  Result<cache::LineageCache::StoredSequence> stored = cache_->Stored(rp.entry);
  if (!stored.ok()) return 0;
  const auto* kv = dynamic_cast<const cache::PagedKv*>(stored->kv.get());
  if (kv == nullptr) return 0;
  const int64_t stored_tokens = std::min<int64_t>(static_cast<int64_t>(stored->tokens.size()), kv->num_tokens());
  if (stored_tokens <= r) return 0;

  // Both walks start at the restore point: the stored sequence equals the
  // prompt up to r, so a run that continues the prefix moves by 0.
  std::vector<cache::ReusedChunk> chunks = cache::MatchTokenChunks(
      prompt.subspan(r), std::span<const int32_t>(stored->tokens).subspan(r, stored_tokens - r), min_run_tokens_);
  cache::CapChunks(chunks, m - 1 - r);
  for (const cache::ReusedChunk& c : chunks) {
    // dst is contiguous by construction: each chunk lands at the sequence's end.
    if (!engine::AppendShiftedRows(config_, *kv, r + c.src, c.len, seq).ok()) break;
  }
  return seq.num_tokens() - r;
}

}  // namespace lineage::server
