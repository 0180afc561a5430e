#include "cache/naive_restore.h"

#include <algorithm>

namespace lineage::cache {

RestoreSearch NaiveRestorePoint(const std::vector<NaiveEntry>& entries, TokenSpan prompt, bool recurrent) {
  RestoreSearch out;
  const auto m = static_cast<int64_t>(prompt.size());
  uint64_t best_recency = 0, closest_recency = 0;
  auto offer = [&](EntryId id, int64_t n, PointKind kind, uint64_t recency) {
    if (n <= 0 || n > m - 1) return;
    if (n > out.best.n || (n == out.best.n && recency > best_recency)) {
      out.best = {id, n, kind};
      best_recency = recency;
    }
  };
  for (const NaiveEntry& e : entries) {
    const size_t k = std::min(e.tokens.size(), prompt.size());
    const auto l = static_cast<int64_t>(std::mismatch(prompt.begin(), prompt.begin() + k, e.tokens.begin()).first -
                                        prompt.begin());
    if (l > 0 && (l > out.shared_tokens || (l == out.shared_tokens && e.recency > closest_recency))) {
      out.shared_tokens = l;
      out.closest = e.id;
      closest_recency = e.recency;
    }
    const auto len = static_cast<int64_t>(e.tokens.size());
    if (l == len) offer(e.id, len, PointKind::kEntryEnd, e.recency);
    if (!recurrent) {
      if (l < len || l == m) offer(e.id, std::min(l, m - 1), PointKind::kPrefix, e.recency);
      continue;
    }
    for (const Checkpoint& c : e.checkpoints) {
      if (c.n <= l) offer(e.id, c.n, c.kind, e.recency);
    }
  }
  return out;
}

}  // namespace lineage::cache
