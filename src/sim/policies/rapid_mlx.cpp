#include "sim/policies/rapid_mlx.h"

#include <algorithm>

namespace lineage::sim {

RapidMlxPolicy::RapidMlxPolicy(const ModelShape& shape, const PolicyOptions& options)
    : PeerPolicy(shape, options) {}

RapidMlxPolicy::Lru::iterator RapidMlxPolicy::Find(std::span<const Segment> tokens, int64_t num_tokens) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->num_tokens == num_tokens && Lcp(tokens, it->tokens) == num_tokens) return it;
  return entries_.end();
}

void RapidMlxPolicy::Evict(Lru::iterator it) {
  bytes_ -= it->bytes;
  entries_.erase(it);
  ++counters_.evictions;
}

// MemoryAwarePrefixCache.store with evict_prefixes=False: an existing key is
// only touched; an entry larger than the budget is refused; LRU entries leave
// until the new one fits, then the hybrid bound keeps the newest N.
void RapidMlxPolicy::Store(std::vector<Segment> tokens) {
  const int64_t n = NumTokens(tokens);
  if (n == 0) return;
  auto found = Find(tokens, n);
  if (found != entries_.end()) {
    entries_.splice(entries_.end(), entries_, found);
    return;
  }
  const int64_t bytes = shape_.SnapshotBytes(n);
  if (bytes > options_.ram_budget_bytes) {
    ++counters_.evictions;  // refused for room, as an eviction would have dropped it
    return;
  }
  while (!entries_.empty() &&
         (bytes_ + bytes > options_.ram_budget_bytes || static_cast<int64_t>(entries_.size()) >= max_entries))
    Evict(entries_.begin());
  entries_.push_back({std::move(tokens), n, bytes});
  bytes_ += bytes;
  if (!shape_.attention_only())
    while (static_cast<int64_t>(entries_.size()) > hybrid_max_entries) Evict(entries_.begin());
  ChargeRam(counters_, bytes_ - counters_.ram_bytes);
}

void RapidMlxPolicy::StoreBoundaries(const Progress* progress) {
  for (auto it = boundaries_.begin(); it != boundaries_.end();) {
    const int64_t done = progress ? progress->ComputedTokens(it->first) : -1;
    if (done >= 0 && done < it->second.tokens) {
      ++it;
      continue;
    }
    Store(TruncateTokens(it->second.request->prompt, it->second.tokens));
    it = boundaries_.erase(it);
  }
}

// MemoryAwarePrefixCache.fetch: exact, supersequence, prefix, then longest
// common prefix; the exact, supersequence-with-excess and LCP paths refuse a
// cache with recurrent layers, which leaves the longest entry that is a strict
// prefix of the prompt. The restored cache is a deep copy of the entry.
Admission RapidMlxPolicy::Admit(const RequestView& r, int64_t) {
  StoreBoundaries(r.progress);
  const Request& q = *r.request;
  const int64_t m = q.num_prompt_tokens;
  auto best = entries_.end();
  int64_t restore = 0;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const int64_t shared = Lcp(q.prompt, it->tokens);
    int64_t usable = 0;
    if (shape_.attention_only())
      usable = std::min(shared, m - 1);
    else if (shared == it->num_tokens && it->num_tokens < m)
      usable = it->num_tokens;
    if (usable > restore) {
      restore = usable;
      best = it;
    }
  }
  Admission a;
  if (best != entries_.end()) {
    entries_.splice(entries_.end(), entries_, best);
    a.restore_tokens = restore;
    a.ram_copy_bytes = shape_.SnapshotBytes(restore);
  }
  // The prefill is split at the message boundary (the prompt without its
  // generation prompt) so that a snapshot is stored there; without one, a
  // cold hybrid prompt is split at m - 1 instead, and its prompt-end store is
  // skipped (scheduler.py, non_trimmable_exact_prefix_reuse).
  int64_t boundary = q.history_end_tokens;
  const bool internal = boundary == 0 && !shape_.attention_only() && restore == 0;
  if (internal) {
    boundary = m - 1;
    internal_.insert(r.index);
  }
  if (boundary > restore && boundary < m) boundaries_[r.index] = {&q, boundary};
  return a;
}

void RapidMlxPolicy::Commit(const RequestView& r, int64_t) {
  StoreBoundaries(r.progress);
  const Request& q = *r.request;
  auto own = boundaries_.find(r.index);
  if (own != boundaries_.end()) {
    Store(TruncateTokens(q.prompt, own->second.tokens));
    boundaries_.erase(own);
  }
  if (internal_.erase(r.index) == 0) Store(q.prompt);
}

void RapidMlxPolicy::Finish(const RequestView& r, int64_t) {
  StoreBoundaries(r.progress);
  Store(PromptAndOutput(*r.request));
}

}  // namespace lineage::sim
