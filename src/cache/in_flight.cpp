#include "cache/in_flight.h"

#include <algorithm>

#include "cache/cache_options.h"

namespace lineage::cache {

uint64_t InFlightTable::Add(TokenSpan tokens, int64_t progress_tokens, std::vector<int64_t> planned) {
  const uint64_t id = next_id_++;
  Record& r = records_[id];
  r.tokens.assign(tokens.begin(), tokens.end());
  r.progress_tokens = progress_tokens;
  std::sort(planned.begin(), planned.end());
  r.planned = std::move(planned);
  if (!r.tokens.empty()) tree_.Insert(r.tokens, id);
  return id;
}

void InFlightTable::Remove(uint64_t id) {
  auto it = records_.find(id);
  if (it == records_.end() || it->second.ended) return;
  Record& r = it->second;
  if (!r.tokens.empty()) tree_.Remove(r.tokens, id);
  r.ended = true;
  // Unpublished points will not come; published ones wait for their takers.
  r.wanted.erase(std::remove_if(r.wanted.begin(), r.wanted.end(),
                                [](const Point& p) { return !p.kv || p.waiters == 0; }),
                 r.wanted.end());
  if (r.wanted.empty()) records_.erase(it);
}

void InFlightTable::SetProgress(uint64_t id, int64_t progress_tokens) {
  auto it = records_.find(id);
  if (it != records_.end()) it->second.progress_tokens = std::max(it->second.progress_tokens, progress_tokens);
}

std::optional<SharedWait> InFlightTable::FindWait(uint64_t self, TokenSpan prompt, int64_t restore_tokens,
                                                  int64_t min_gain_tokens) {
  const auto m = static_cast<int64_t>(prompt.size());
  const int64_t shared = tree_.Walk(prompt, m, [](const TreePoint&) {});
  int64_t n = BeforeBoundary(std::min(shared, m - 1));
  if (shared <= 0 || n - restore_tokens < std::max<int64_t>(1, min_gain_tokens)) return std::nullopt;
  // Of the prefills that can still capture n (or keep it already), or else
  // capture a planned point below it, the one that gives the most; then the
  // one furthest along: the first found could be a prefill itself waiting
  // for another's capture, whose restore then jumps past n and never
  // computes it (its waiter then waited for the whole prefill and started
  // cold).
  uint64_t best = 0;
  int64_t best_n = 0, best_progress = -1;
  tree_.EntriesSharing(prompt, shared, [&](EntryId id) {
    if (id == self) return true;
    const Record& r = records_.at(id);
    if (n >= static_cast<int64_t>(r.tokens.size())) return true;
    // The owner must be at least as far as the waiter: otherwise waiting
    // would delay the waiter's first token.
    if (r.progress_tokens < restore_tokens) return true;
    const Point* p = FindPoint(id, n);
    int64_t at = 0;
    if (p != nullptr || r.progress_tokens < n) {
      at = n;
    } else {
      auto below = std::upper_bound(r.planned.begin(), r.planned.end(), n);
      if (below != r.planned.begin()) at = *(below - 1);
      if (at - restore_tokens < std::max<int64_t>(1, min_gain_tokens)) return true;
    }
    const Point* q = at == n ? p : FindPoint(id, at);
    const int64_t progress = q != nullptr && q->kv ? at : r.progress_tokens;
    if (at > best_n || (at == best_n && progress > best_progress)) {
      best = id;
      best_n = at;
      best_progress = progress;
    }
    return true;
  });
  if (best_progress < 0) return std::nullopt;
  n = best_n;
  Record& r = records_.at(best);
  Point* p = FindPoint(best, n);
  if (p == nullptr) {
    auto at = std::lower_bound(r.wanted.begin(), r.wanted.end(), n, [](const Point& q, int64_t v) { return q.n < v; });
    p = &*r.wanted.insert(at, Point{n, nullptr, nullptr, 0});
  }
  ++p->waiters;
  return SharedWait{best, n};
}

std::vector<int64_t> InFlightTable::WantedIn(uint64_t id, int64_t from_tokens, int64_t to_tokens) const {
  std::vector<int64_t> out;
  auto it = records_.find(id);
  if (it == records_.end()) return out;
  for (const Point& p : it->second.wanted) {
    if (p.n > from_tokens && p.n <= to_tokens && !p.kv) out.push_back(p.n);
  }
  return out;
}

bool InFlightTable::IsWanted(uint64_t id, int64_t n) const {
  auto it = records_.find(id);
  if (it == records_.end()) return false;
  for (const Point& p : it->second.wanted) {
    if (p.n == n) return !p.kv;
  }
  return false;
}

void InFlightTable::Publish(uint64_t id, int64_t n, KvPtr kv, RecurrentPtr state) {
  Point* p = FindPoint(id, n);
  if (p == nullptr || p->kv || !kv || kv->num_tokens() < n) return;
  p->kv = kv->num_tokens() == n ? std::move(kv) : kv->Prefix(n);
  p->state = std::move(state);
}

SharedState InFlightTable::Take(const SharedWait& wait, KvPtr* kv, RecurrentPtr* state) {
  Point* p = FindPoint(wait.owner, wait.n);
  if (p == nullptr) return SharedState::kGone;
  if (!p->kv) return records_.at(wait.owner).ended ? SharedState::kGone : SharedState::kPending;
  *kv = p->kv;
  *state = p->state;
  Unwait(wait.owner, p);
  return SharedState::kReady;
}

void InFlightTable::Abandon(const SharedWait& wait) {
  if (Point* p = FindPoint(wait.owner, wait.n)) Unwait(wait.owner, p);
}

InFlightTable::Point* InFlightTable::FindPoint(uint64_t id, int64_t n) {
  auto it = records_.find(id);
  if (it == records_.end()) return nullptr;
  for (Point& p : it->second.wanted) {
    if (p.n == n) return &p;
  }
  return nullptr;
}

void InFlightTable::Unwait(uint64_t id, Point* p) {
  if (p->waiters > 0) --p->waiters;
  Record& r = records_.at(id);
  if (!r.ended) return;
  // An ended owner keeps only what someone still waits for.
  r.wanted.erase(std::remove_if(r.wanted.begin(), r.wanted.end(), [](const Point& q) { return q.waiters == 0; }),
                 r.wanted.end());
  if (r.wanted.empty()) records_.erase(id);
}

}  // namespace lineage::cache
