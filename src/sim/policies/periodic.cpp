#include "sim/policies/periodic.h"

#include <algorithm>
#include <limits>

namespace lineage::sim {

PeriodicPolicy::PeriodicPolicy(const ModelShape& shape, const PolicyOptions& options)
    : PeerPolicy(shape, options) {}

Admission PeriodicPolicy::Admit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  const int64_t m = q.num_prompt_tokens;
  Pending best;
  int64_t best_used = -1;
  for (auto& [id, l] : lineages_) {
    int64_t cap = std::min(Lcp(q.prompt, l.seq), m - 1);
    int64_t point = 0;
    if (shape_.attention_only()) {
      point = cap;
    } else {
      for (int64_t c : l.checkpoints)
        if (c <= cap) point = c;
    }
    if (point > best.restore || (point == best.restore && point > 0 && l.last_used_ms > best_used)) {
      best = {id, point};
      best_used = l.last_used_ms;
    }
  }
  if (best.lineage >= 0) lineages_[best.lineage].last_used_ms = now_ms;
  pending_[r.index] = best;
  Admission a;
  a.restore_tokens = best.restore;
  a.ram_copy_bytes = best.restore > 0 ? shape_.recurrent_bytes : 0;
  return a;
}

void PeriodicPolicy::AddCheckpoints(Lineage& l, int64_t from_exclusive, int64_t to) {
  if (shape_.attention_only()) {
    l.checkpoints = {to};
    return;
  }
  for (int64_t n = (from_exclusive / interval_tokens + 1) * interval_tokens; n < to; n += interval_tokens)
    l.checkpoints.push_back(n);
  l.checkpoints.push_back(to);
  std::sort(l.checkpoints.begin(), l.checkpoints.end());
  l.checkpoints.erase(std::unique(l.checkpoints.begin(), l.checkpoints.end()), l.checkpoints.end());
}

// Drops the checkpoint closest to its predecessor (never the end) until the
// lineage holds at most max_checkpoints.
void PeriodicPolicy::Thin(Lineage& l) const {
  while (static_cast<int64_t>(l.checkpoints.size()) > max_checkpoints) {
    size_t victim = 0;
    int64_t smallest = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i + 1 < l.checkpoints.size(); ++i) {
      int64_t gap = l.checkpoints[i] - (i ? l.checkpoints[i - 1] : 0);
      if (gap < smallest) {
        smallest = gap;
        victim = i;
      }
    }
    l.checkpoints.erase(l.checkpoints.begin() + static_cast<std::ptrdiff_t>(victim));
  }
}

void PeriodicPolicy::Commit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  Pending p = pending_[r.index];
  pending_.erase(r.index);
  auto it = p.lineage >= 0 ? lineages_.find(p.lineage) : lineages_.end();
  Lineage* target = nullptr;
  if (it != lineages_.end() && it->second.num_tokens < q.num_prompt_tokens &&
      Lcp(q.prompt, it->second.seq) == it->second.num_tokens) {
    target = &it->second;  // the prompt extends the lineage: it grows in place
    tree_.Release(target->node);
    num_checkpoints_ -= static_cast<int64_t>(target->checkpoints.size());
  } else {
    target = &lineages_[next_id_++];
  }
  target->seq = q.prompt;
  target->num_tokens = q.num_prompt_tokens;
  target->node = tree_.Hold(SequenceTokens(q.prompt));
  target->last_used_ms = now_ms;
  AddCheckpoints(*target, p.restore, q.num_prompt_tokens);
  Thin(*target);
  num_checkpoints_ += static_cast<int64_t>(target->checkpoints.size());
  Enforce();
}

int64_t PeriodicPolicy::Bytes() const {
  return tree_.live_tokens() * shape_.kv_bytes_per_token + num_checkpoints_ * shape_.recurrent_bytes;
}

void PeriodicPolicy::Drop(int64_t id) {
  auto it = lineages_.find(id);
  tree_.Release(it->second.node);
  num_checkpoints_ -= static_cast<int64_t>(it->second.checkpoints.size());
  lineages_.erase(it);
}

// The budget holds after every call: the peak is measured once LRU lineages left.
void PeriodicPolicy::Enforce() {
  while (Bytes() > options_.ram_budget_bytes && !lineages_.empty()) {
    auto lru = std::min_element(lineages_.begin(), lineages_.end(), [](const auto& a, const auto& b) {
      return a.second.last_used_ms < b.second.last_used_ms;
    });
    Drop(lru->first);
    ++counters_.evictions;
  }
  ChargeRam(counters_, Bytes() - counters_.ram_bytes);
}

}  // namespace lineage::sim
