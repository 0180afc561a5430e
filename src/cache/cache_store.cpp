#include "cache/cache_store.h"

#include <algorithm>
#include <string>

#include "cache/thinning.h"
#include "core/clock.h"

namespace lineage::cache {

Entry* CacheStore::Find(EntryId id) {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

uint64_t CacheStore::Recency(EntryId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.last_used;
}

void CacheStore::Charge(ByteLedger& ledger, const Entry& e, bool add) const {
  if (add) {
    ledger.AddKv(*e.kv, PrivateKv());
    ledger.AddBlob(e.state.get());
    for (const Checkpoint& c : e.checkpoints) ledger.AddBlob(c.state.get());
  } else {
    ledger.RemoveKv(*e.kv, PrivateKv());
    ledger.RemoveBlob(e.state.get());
    for (const Checkpoint& c : e.checkpoints) ledger.RemoveBlob(c.state.get());
  }
}

void CacheStore::Add(Entry entry) {
  // An entry touched just now is being committed or extended: a use.
  if (entry.used_ms == 0 || entry.last_used == tick_) entry.used_ms = WallMs();
  tree_.Insert(entry.tokens, entry.id);
  for (const Checkpoint& c : entry.checkpoints) tree_.AddPoint(entry.tokens, entry.id, c.n, c.kind);
  Charge(ram_, entry, true);
  if (entry.anchor) {
    Charge(anchor_ledger_, entry, true);
    ++num_anchors_;
  }
  const EntryId id = entry.id;
  lru_[ClassOf(entry)].insert({entry.last_used, id});
  entries_.emplace(id, std::move(entry));
}

void CacheStore::Use(Entry& e) {
  lru_[ClassOf(e)].erase({e.last_used, e.id});
  e.last_used = Touch();
  e.used_ms = WallMs();
  ++e.hits;
  lru_[ClassOf(e)].insert({e.last_used, e.id});
}

Entry CacheStore::Take(EntryId id) {
  auto it = entries_.find(id);
  Entry e = std::move(it->second);
  entries_.erase(it);
  lru_[ClassOf(e)].erase({e.last_used, e.id});
  tree_.Remove(e.tokens, e.id);
  Charge(ram_, e, false);
  if (e.anchor) {
    Charge(anchor_ledger_, e, false);
    --num_anchors_;
  }
  return e;
}

void CacheStore::Evict(EntryId id, CommitExplanation* ex) {
  Entry e = Take(id);
  ++counters_.evictions;
  if (ex) {
    const bool on_disk = disk_ && disk_->Contains(id);
    ex->evicted.push_back({id, e.num_tokens(), e.anchor, on_disk ? Tier::kDisk : Tier::kNone});
  }
}

EntryId CacheStore::LruVictim(std::initializer_list<Class> classes, bool allow_leased) const {
  // The oldest eligible entry of each class; leased entries are few, so the
  // walk past them is short.
  std::pair<uint64_t, EntryId> best{UINT64_MAX, kNoEntry};
  for (Class c : classes) {
    for (const auto& [used, id] : lru_[c]) {
      if (allow_leased || entries_.at(id).leases == 0) {
        best = std::min(best, std::pair{used, id});
        break;
      }
    }
  }
  return best.second;
}

void CacheStore::EnforceBudgets(CommitExplanation* ex) {
  EvictOverBudget(ex);
  // The peak is taken once a call is done: inside a commit the new entry is
  // charged before older ones make room for it.
  counters_.peak_ram_bytes = std::max(counters_.peak_ram_bytes, ram_.total_bytes());
}

void CacheStore::EvictOverBudget(CommitExplanation* ex) {
  while (num_anchors_ > o_.max_anchor_entries || anchor_ledger_.total_bytes() > o_.max_anchor_bytes) {
    EntryId v = LruVictim({kUnprovenAnchor});
    if (v == kNoEntry) v = LruVictim({kProvenAnchor});
    if (v == kNoEntry) break;
    Evict(v, ex);
  }
  if (o_.mode == CacheMode::kExact) {
    while (static_cast<int64_t>(entries_.size()) > o_.exact_max_entries) {
      const EntryId v = LruVictim({kConversation, kUnprovenAnchor, kProvenAnchor});
      if (v == kNoEntry) break;
      Evict(v, ex);
    }
  }
  // One order over every unleased entry (LeastValueVictim: value per byte
  // over idle time; plain LRU in exact mode); leased entries last. A lease's
  // restore point holds its own references to the payload, so the request
  // it serves loses nothing: the budget is a hard limit after every call.
  // Anchors compete on evidence of reuse, not on their kind, and evidence is
  // spent: an anchor that has served restores goes round the order once
  // more instead of leaving, a lap per restore, at most kMaxAnchorLaps
  // banked. Protected for good (the previous rule), anchors that were reused
  // once and never again filled a tight budget while every conversation left
  // RAM before its next turn (mixed traffic, glm-5.3-flash, 3G: 8.7% of the
  // oracle); not protected at all, the shared system prompts of a small
  // budget left as often as any conversation.
  while (ram_.total_bytes() > o_.ram_budget_bytes) {
    // Benefit per byte first: an end that saves fewer tokens than its
    // state's bytes would hold as KV goes before any conversation in LRU
    // order loses anything (a block-shaped turn's reply end: the next turn
    // leaves at the checkpoint below it). Such ends held a third of RAM on
    // Mooncake-shaped traffic at glm-5.3-flash.
    if (const EntryId cheap = CheapestTail(); cheap != kNoEntry && TrimToCheckpoint(cheap)) continue;
    if (DropRung()) continue;
    EntryId v = o_.mode == CacheMode::kLineage ? LeastValueVictim()
                                               : LruVictim({kConversation, kUnprovenAnchor, kProvenAnchor});
    if (v == kNoEntry) v = LruVictim({kConversation, kUnprovenAnchor, kProvenAnchor}, /*allow_leased=*/true);
    if (v == kNoEntry) break;  // nothing left
    if (SpendAnchorLap(v)) continue;
    if (TrimToCheckpoint(v)) continue;
    Evict(v, ex);
  }
}

double CacheStore::ValuePerByte(const Entry& e) const {
  // What the entry's next eviction step loses, in restorable tokens, per
  // byte it frees: the tail above the newest checkpoint where it would be
  // trimmed, else all of it. A state's bytes count as the KV tokens they
  // would hold, so a short tail with its own state is worth little and a
  // long conversation's tail nearly one token per token of KV.
  const double kv = static_cast<double>(o_.kv_bytes_per_token > 0 ? o_.kv_bytes_per_token : 1);
  const double state = static_cast<double>(std::max<int64_t>(o_.state_bytes, 0));
  if (CanTrim(e)) {
    const double tokens = static_cast<double>(e.num_tokens() - e.checkpoints.back().n);
    return tokens / (tokens * kv + state);
  }
  const double tokens = static_cast<double>(e.num_tokens());
  return tokens / (tokens * kv + state * static_cast<double>(1 + e.checkpoints.size()));
}

EntryId CacheStore::LeastValueVictim() const {
  // Expected benefit per byte, with the chance of reuse taken as falling
  // with the time since last use (hyperbolic caching: value / (bytes x
  // age)). Pure LRU let a long conversation that paused for its
  // sub-agents leave RAM in favour of many short ones whose states cost
  // more bytes than their tokens save (mixed traffic at qwen3.5-0.8b pace,
  // 1G: the `code` sessions lost 320k tokens to Marconi's recency +
  // efficiency order). Only the oldest kEvictionWindow unleased entries
  // of each class are weighed: the order among them is what matters, and
  // each eviction step stays O(1) in the number of entries. Where no entry
  // holds a state (attention-only models) every value is equal and this is
  // LRU.
  EntryId best = kNoEntry;
  double best_score = 0;
  for (const auto& order : lru_) {
    int seen = 0;
    for (const auto& [used, id] : order) {
      const Entry& e = entries_.at(id);
      if (e.leases > 0) continue;
      if (++seen > kEvictionWindow) break;
      const double age = static_cast<double>(tick_ - used + 1);
      const double score = ValuePerByte(e) / age;
      if (best == kNoEntry || score < best_score) best = id, best_score = score;
    }
  }
  return best;
}

EntryId CacheStore::CheapestTail() const {
  if (o_.state_bytes <= 0 || o_.kv_bytes_per_token <= 0) return kNoEntry;
  const int64_t state_tokens = o_.state_bytes / o_.kv_bytes_per_token;
  for (const auto& [used, id] : lru_[kConversation]) {
    const Entry& e = entries_.at(id);
    if (e.hintless && e.leases == 0 && CanTrim(e) && e.num_tokens() - e.checkpoints.back().n < state_tokens) {
      return id;
    }
  }
  return kNoEntry;
}

bool CacheStore::SpendAnchorLap(EntryId id) {
  Entry& e = entries_.at(id);
  if (!e.anchor || e.hits <= 0 || e.leases > 0) return false;
  lru_[kProvenAnchor].erase({e.last_used, e.id});
  e.hits = std::min<int64_t>(e.hits - 1, kMaxAnchorLaps);
  e.last_used = Touch();
  lru_[ClassOf(e)].insert({e.last_used, e.id});
  return true;
}

bool CacheStore::CanTrim(const Entry& e) const {
  return !e.anchor && !e.checkpoints.empty() && o_.recurrent && o_.mode == CacheMode::kLineage &&
         !(disk_ && disk_->Contains(e.id)) && e.checkpoints.back().n > 0 && e.checkpoints.back().state != nullptr;
}

bool CacheStore::TrimToCheckpoint(EntryId id) {
  // A conversation leaves RAM from its tail, one checkpoint at a time, as a
  // radix cache drops its leaves: under a budget that holds fewer lineages
  // than the traffic interleaves, whole-entry LRU evicts every lineage just
  // before its next turn, while a trimmed one still restores at its newest
  // remaining checkpoint. An entry whose disk copy exists leaves whole (the
  // disk holds all of it); an attention-only entry has no states to trim to.
  Entry* e = Find(id);
  if (e == nullptr || e->leases > 0 || !CanTrim(*e)) return false;
  Entry t = Take(id);
  const Checkpoint c = t.checkpoints.back();
  t.checkpoints.pop_back();
  t.tokens.resize(static_cast<size_t>(c.n));
  t.kv = t.kv->Prefix(c.n);
  t.state = c.state;
  Add(std::move(t));
  ++counters_.trimmed;
  return true;
}

bool CacheStore::DropRung() {
  for (int klass : {kUnprovenAnchor, kProvenAnchor}) {
    for (const auto& [used, id] : lru_[klass]) {
      const Entry& e = entries_.at(id);
      if (e.checkpoints.empty() || e.leases > 0 || (disk_ && disk_->Contains(e.id))) continue;
      Entry t = Take(id);
      t.checkpoints.erase(t.checkpoints.begin());
      Add(std::move(t));
      ++counters_.trimmed;
      return true;
    }
  }
  return false;
}

void CacheStore::NormalizeAndThin(Entry& e, CommitExplanation* ex) {
  auto& cps = e.checkpoints;
  const int64_t len = e.num_tokens();
  cps.erase(std::remove_if(cps.begin(), cps.end(),
                           [&](const Checkpoint& c) { return c.n <= 0 || c.n >= len || !c.state; }),
            cps.end());
  std::stable_sort(cps.begin(), cps.end(), [](const Checkpoint& a, const Checkpoint& b) {
    return a.n != b.n ? a.n < b.n : KeepRank(a.kind) < KeepRank(b.kind);
  });
  // Points at one n merge into the first; it is a branch point if any was.
  size_t kept = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    if (kept > 0 && cps[kept - 1].n == cps[i].n) {
      cps[kept - 1].branch |= cps[i].branch;
    } else {
      cps[kept++] = std::move(cps[i]);
    }
  }
  cps.resize(kept);
  const int64_t kv_bytes = static_cast<int64_t>(e.kv->page_ids().size()) * e.kv->page_bytes();
  const int64_t blob_bytes = cps.empty() ? 0 : cps.front().state->bytes();
  const int64_t limit = CheckpointLimit(o_, kv_bytes, blob_bytes);
  for (const Checkpoint& c : ThinCheckpoints(cps, len, limit, o_.thin_order, o_.guard_tokens)) {
    ++counters_.thinned;
    if (ex) ex->thinned.push_back({e.id, c.n, c.kind});
  }
}

void CacheStore::PutToDisk(const Entry& e) {
  if (!disk_) return;
  DiskRecord rec;
  rec.id = e.id;
  rec.tokens = e.tokens;
  rec.kv = e.kv;
  rec.state = e.state;
  rec.checkpoints = e.checkpoints;
  rec.anchor = e.anchor;
  rec.whole_snapshot = PrivateKv();
  // A failed write leaves the entry in RAM only; the disk tier reports it.
  (void)disk_->Put(rec);
}

EntryId CacheStore::AnchorAt(TokenSpan prompt, int64_t n) const {
  EntryId found = kNoEntry;
  tree_.Walk(prompt.first(static_cast<size_t>(n)), n, [&](const TreePoint& p) {
    if (p.kind == PointKind::kEntryEnd && p.n == n && entries_.at(p.entry).anchor) found = p.entry;
  });
  return found;
}

EntryId CacheStore::SameTokens(TokenSpan tokens) const {
  const auto n = static_cast<int64_t>(tokens.size());
  EntryId found = kNoEntry;
  tree_.Walk(tokens, n, [&](const TreePoint& p) {
    if (p.kind == PointKind::kEntryEnd && p.n == n && !entries_.at(p.entry).anchor) found = p.entry;
  });
  return found;
}

uint64_t CacheStore::NewLease(LeaseRecord rec) {
  if (rec.tier == Tier::kRam) {
    if (Entry* e = Find(rec.source)) ++e->leases;
  }
  const uint64_t id = next_lease_++;
  leases_.emplace(id, std::move(rec));
  return id;
}

LeaseRecord* CacheStore::FindLease(uint64_t id) {
  auto it = leases_.find(id);
  return it == leases_.end() ? nullptr : &it->second;
}

LeaseRecord CacheStore::TakeLease(uint64_t id) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return {};
  LeaseRecord rec = std::move(it->second);
  leases_.erase(it);
  if (rec.tier == Tier::kRam) {
    // The source may have been absorbed meanwhile; then there is nothing to unpin.
    if (Entry* e = Find(rec.source)) --e->leases;
  }
  return rec;
}

void CacheStore::ReleaseLease(uint64_t id) { (void)TakeLease(id); }

Status CacheStore::CheckInvariants() const {
  ByteLedger ram, anchors;
  int64_t num_anchors = 0;
  std::unordered_map<EntryId, int64_t> pins;
  for (const auto& [id, rec] : leases_) {
    if (rec.tier == Tier::kRam && entries_.count(rec.source)) ++pins[rec.source];
  }
  for (const auto& [id, e] : entries_) {
    Charge(ram, e, true);
    if (e.anchor) {
      Charge(anchors, e, true);
      ++num_anchors;
    }
    if (e.leases != pins[id]) return Internal("entry " + std::to_string(id) + " lease count is wrong");
    if (e.kv->num_tokens() != e.num_tokens()) return Internal("entry KV length differs from its tokens");
    int64_t prev = 0;
    for (const Checkpoint& c : e.checkpoints) {
      if (c.n <= prev || c.n >= e.num_tokens()) return Internal("checkpoints not ascending inside the entry");
      prev = c.n;
    }
    if (!e.anchor && o_.mode == CacheMode::kLineage) {
      const int64_t kv_bytes = static_cast<int64_t>(e.kv->page_ids().size()) * e.kv->page_bytes();
      const int64_t blob = e.checkpoints.empty() ? 0 : e.checkpoints.front().state->bytes();
      if (static_cast<int64_t>(e.checkpoints.size()) > CheckpointLimit(o_, kv_bytes, blob)) {
        return Internal("entry " + std::to_string(id) + " has too many checkpoints");
      }
    }
    bool found_end = false;
    const int64_t shared = tree_.Walk(e.tokens, e.num_tokens(), [&](const TreePoint& p) {
      found_end |= p.entry == id && p.kind == PointKind::kEntryEnd && p.n == e.num_tokens();
    });
    if (shared != e.num_tokens() || !found_end) return Internal("entry missing from the index");
  }
  if (ram.total_bytes() != ram_.total_bytes()) return Internal("RAM ledger drifted from a recount");
  if (anchors.total_bytes() != anchor_ledger_.total_bytes() || num_anchors != num_anchors_) {
    return Internal("anchor ledger drifted from a recount");
  }
  if (ram_.total_bytes() > o_.ram_budget_bytes) {
    return Internal("RAM over budget: " + std::to_string(ram_.total_bytes()));
  }
  if ((num_anchors_ > o_.max_anchor_entries || anchor_ledger_.total_bytes() > o_.max_anchor_bytes)) {
    bool unpinned_anchor = false;
    for (const auto& [id, e] : entries_) unpinned_anchor |= e.anchor && e.leases == 0;
    if (unpinned_anchor) return Internal("anchor caps exceeded");
  }
  return Status::Ok();
}

}  // namespace lineage::cache
