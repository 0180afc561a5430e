#include "cache/restore_search.h"

namespace lineage::cache {

RestoreSearch FindRestorePoint(const PrefixTree& tree, TokenSpan prompt, bool recurrent,
                               const std::function<uint64_t(EntryId)>& recency,
                               const std::function<void(const TreePoint&)>& also_visit, bool want_closest) {
  RestoreSearch out;
  const int64_t m = static_cast<int64_t>(prompt.size());
  uint64_t best_recency = 0;
  out.shared_tokens = tree.Walk(prompt, m, [&](const TreePoint& p) {
    if (also_visit) also_visit(p);
    if (p.n > m - 1) return;  // a restore point is never m: logits need one token
    if (!recurrent && p.kind != PointKind::kEntryEnd) return;
    const uint64_t rec = recency(p.entry);
    if (p.n > out.best.n || (p.n == out.best.n && rec > best_recency)) {
      out.best = p;
      best_recency = rec;
    }
  });
  if (!want_closest && recurrent) return out;
  uint64_t closest_recency = 0;
  tree.EntriesSharing(prompt, out.shared_tokens, [&](EntryId id) {
    const uint64_t rec = recency(id);
    if (out.closest == kNoEntry || rec > closest_recency) {
      out.closest = id;
      closest_recency = rec;
    }
    // Recurrent layouts only name the closest sequence (explanations): the
    // first found will do. Scanning every sharer per lookup made a replay
    // quadratic when thousands of entries share one prefix.
    return !recurrent;
  });
  if (!recurrent) {
    const int64_t r = std::min(out.shared_tokens, m - 1);
    if (r > out.best.n && out.closest != kNoEntry) out.best = {out.closest, r, PointKind::kPrefix};
  }
  return out;
}

}  // namespace lineage::cache
