#include "cache/lineage_cache.h"

#include <algorithm>

#include "cache/cache_store.h"
#include "cache/capture_plan.h"
#include "cache/restore_search.h"

namespace lineage::cache {

struct LineageCache::Impl {
  Impl(const CacheOptions& o, DiskTier* disk) : store(o, disk) {}
  CacheStore store;
  InFlightTable in_flight;
};

// ---- Lease ----

Lease::Lease(Lease&& other) noexcept : cache_(other.cache_), id_(other.id_) { other.cache_ = nullptr; }

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    cache_ = other.cache_;
    id_ = other.id_;
    other.cache_ = nullptr;
  }
  return *this;
}

Lease::~Lease() { Release(); }

void Lease::Release() {
  if (cache_) cache_->ReleaseLease(id_);
  cache_ = nullptr;
}

void LineageCache::ReleaseLease(uint64_t lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->store.ReleaseLease(lease_id);
}

LineageCache::LineageCache(const CacheOptions& options, DiskTier* disk)
    : options_(options), disk_(disk), impl_(std::make_unique<Impl>(options_, disk)) {}

LineageCache::~LineageCache() = default;

namespace {

// Restores by the whole-prefix rule only: what the previous design did, and
// what a recurrent layout needs.
bool AnyPrefixRestores(const CacheOptions& o) { return !o.recurrent && o.mode == CacheMode::kLineage; }

RestorePoint PointOf(const Entry& e, const TreePoint& p) {
  RestorePoint rp;
  rp.entry = e.id;
  rp.length = p.n;
  rp.kind = p.kind;
  rp.tier = Tier::kRam;
  rp.anchor = e.anchor;
  rp.kv = p.n == e.num_tokens() ? e.kv : e.kv->Prefix(p.n);
  if (p.kind == PointKind::kEntryEnd) {
    rp.state = e.state;
  } else if (p.kind != PointKind::kPrefix) {
    for (const Checkpoint& c : e.checkpoints) {
      if (c.n == p.n) rp.state = c.state;
    }
  }
  return rp;
}

// CommitRequest::absorb_tails: the prompt left entry e after `shared`
// tokens, a block boundary, and e's prompt (up to its last turn boundary
// past `shared`, the end-of-generation extension's, or its end) has no whole
// block after it. In block-hashed traffic no later prompt can then share
// e's tokens past `shared` but an exact resend of it.
bool LeftAtItsLastBlock(const Entry& e, int64_t shared, int64_t block) {
  if (block <= 0 || shared < block || shared % block != 0) return false;
  int64_t prompt_end = e.num_tokens();
  for (const Checkpoint& c : e.checkpoints) {
    if (c.kind == PointKind::kFinal && c.n > shared) prompt_end = std::min(prompt_end, c.n);
  }
  return (prompt_end - 1) / block * block <= shared;
}

// The prompt left e after `shared` tokens, past e's history end at h but
// before any later point of e: inside the generation prompt after h. It
// re-rendered the conversation from h (a thinking template renders the
// replies before a new human message without their thinking), so in its
// lineage h is a turn boundary, no longer the history end of a running turn
// (thinning keeps the oldest history end: the new turn's own must be it).
bool LeftInsideGenerationPrompt(const Entry& e, int64_t h, int64_t shared) {
  if (shared >= e.num_tokens()) return false;
  return std::none_of(e.checkpoints.begin(), e.checkpoints.end(),
                      [&](const Checkpoint& c) { return c.n > h && c.n <= shared; });
}

int64_t CommonPrefix(TokenSpan a, TokenSpan b) {
  const size_t n = std::min(a.size(), b.size());
  return std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin();
}

// The prompt of new entry `n` was admitted from `from` inside a sequence it
// does not continue (a sibling's checkpoint, or a capture another prefill
// made for it): that state is where two lineages part. Both keep it as a
// branch point, one blob charged once, so that the next sibling still finds
// it when the first holder is absorbed, trimmed or evicted. Without this a
// document's shared prefix kept its KV in every question's entry while its
// one state went with the first session's next turn.
// Where the prompt captured its own divergence point above `from`, the
// lineages part there, not at `from`: that state was only the rung it
// climbed from and stays an ordinary point of its holder. (A client that
// deletes old tool results restores from below each deletion; keeping the
// rung as a branch point too took one of the entry's few slots from the
// points the next deletion needs: `mixed`, qwen3.5-0.8b 1G RAM-only, 69.0 ->
// 70.9 % of the oracle.)
void KeepBranchPoint(CacheStore& s, const LeaseRecord& lease, const CapturedState& from, Entry& n) {
  if (from.n <= 0 || from.n >= n.num_tokens() || !from.state || !s.options().recurrent) return;
  for (const Checkpoint& c : n.checkpoints) {
    if (c.kind == PointKind::kDivergence && c.n > from.n) return;
  }
  n.checkpoints.push_back({from.n, PointKind::kDivergence, from.state, /*branch=*/true});
  if (lease.tier != Tier::kRam) return;
  if (Entry* source = s.Find(lease.source)) {
    for (Checkpoint& c : source->checkpoints) c.branch |= c.n == from.n;
  }
}

}  // namespace

// ---- Lookup (§3.1, §3.2) ----

Result<LookupResult> LineageCache::Lookup(TokenSpan prompt, const LookupHints& hints) {
  const auto m = static_cast<int64_t>(prompt.size());
  if (m == 0) return InvalidArgument("cache lookup: empty prompt");
  if (hints.anchor_tokens < 0 || hints.anchor_tokens > m || hints.history_end_tokens < 0 ||
      hints.history_end_tokens > m || hints.system_end_tokens < 0 || hints.system_end_tokens > m) {
    return InvalidArgument("cache lookup: hint outside the prompt");
  }
  const bool any_prefix = AnyPrefixRestores(options_);
  std::unique_lock<std::mutex> lock(mu_);
  CacheStore& s = impl_->store;
  ++s.counters().lookups;
  const int64_t a = AnchorPoint(hints), sys = SystemEndPoint(hints);
  bool anchor_exists = false, system_end_exists = false;
  const RestoreSearch found = FindRestorePoint(
      s.tree(), prompt, !any_prefix, [&](EntryId id) { return s.Recency(id); },
      [&](const TreePoint& p) {
        if (p.kind != PointKind::kEntryEnd || !s.Find(p.entry)->anchor) return;
        if (p.n == a) anchor_exists = true;
        if (p.n == sys) system_end_exists = true;
      });

  LookupResult out;
  LookupExplanation& ex = out.explanation;
  ex.prompt_tokens = m;
  ex.closest_entry = found.closest;
  ex.closest_shared_tokens = found.shared_tokens;
  LeaseRecord lease;
  if (found.best.entry != kNoEntry) {
    Entry* e = s.Find(found.best.entry);
    s.Use(*e);
    out.restore = PointOf(*e, found.best);
    lease = {e->id, Tier::kRam, out.restore.length, out.restore.kind, out.restore.state, e->anchor};
  }
  ex.best_ram = out.restore.ref();

  std::optional<DiskPoint> on_disk;
  int64_t shared_tokens = found.shared_tokens;
  if (DiskTier* disk = s.disk()) {
    ex.disk_consulted = true;
    // A sequence held on disk only still tells where this prompt diverges.
    if (!any_prefix) shared_tokens = std::max(shared_tokens, disk->SharedTokens(prompt));
    on_disk = disk->Lookup(prompt, out.restore.length, !any_prefix);
    if (on_disk && (on_disk->length <= out.restore.length || on_disk->length >= m)) on_disk.reset();
  }
  uint64_t lease_id = s.NewLease(lease);
  if (on_disk) {
    // Disk reads run without the cache lock; the RAM lease stays a fallback.
    lock.unlock();
    Result<DiskLoad> loaded = s.disk()->Load(on_disk->entry, on_disk->length);
    lock.lock();
    if (loaded.ok() && loaded->kv && loaded->kv->num_tokens() == on_disk->length) {
      s.ReleaseLease(lease_id);
      out.restore = {on_disk->entry, on_disk->length, on_disk->kind, Tier::kDisk, loaded->kv, loaded->state,
                     on_disk->anchor};
      lease = {on_disk->entry, Tier::kDisk, on_disk->length, on_disk->kind, loaded->state, on_disk->anchor};
      lease_id = s.NewLease(lease);
      ++s.counters().disk_restores;
    }
  }
  ex.chosen = out.restore.ref();
  s.counters().restored_tokens += out.restore.length;

  PlanInputs plan;
  plan.prompt_tokens = m;
  plan.restore_tokens = out.restore.length;
  plan.closest_shared_tokens = shared_tokens;
  plan.anchor_tokens = a;
  plan.anchor_exists = anchor_exists;
  plan.system_end_tokens = sys;
  plan.system_end_exists = system_end_exists;
  plan.history_end_tokens = hints.history_end_tokens;
  plan.structural = Hintless(hints);
  out.captures = PlanCaptures(plan, options_);
  ex.planned = out.captures;
  out.lease = Lease(this, lease_id);
  return out;
}

Result<LineageCache::StoredSequence> LineageCache::Stored(EntryId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = impl_->store.Find(id);
  if (e == nullptr) return NotFound("entry " + std::to_string(id) + " is not in RAM");
  return StoredSequence{e->tokens, e->kv};
}

// ---- Commit (§3.3–3.5) ----

namespace {

Status ValidateState(const CacheOptions& o, const RecurrentPtr& state, const char* what) {
  if (o.recurrent && !state) return InvalidArgument(std::string("cache: missing recurrent state ") + what);
  return Status::Ok();
}

}  // namespace

Result<CommitResult> LineageCache::Commit(CommitRequest req) {
  const auto m = static_cast<int64_t>(req.prompt.size());
  if (m == 0) return InvalidArgument("cache commit: empty prompt");
  if (!req.kv || req.kv->num_tokens() != m) return InvalidArgument("cache commit: KV length differs from the prompt");
  LINEAGE_RETURN_IF_ERROR(ValidateState(options_, req.state, "at the prompt end"));
  for (const CapturedState& c : req.captured) {
    if (c.n <= 0 || c.n > m) return InvalidArgument("cache commit: capture outside the prompt");
    LINEAGE_RETURN_IF_ERROR(ValidateState(options_, c.state, "at a capture point"));
  }
  // Consume the lease here: its destructor would take the lock we are about to hold.
  const bool had_lease = req.lease.valid();
  const uint64_t lease_id = req.lease.id();
  req.lease.cache_ = nullptr;

  std::lock_guard<std::mutex> lock(mu_);
  CacheStore& s = impl_->store;
  const LeaseRecord lease = had_lease ? s.TakeLease(lease_id) : LeaseRecord{};
  CommitResult out;
  CommitExplanation& ex = out.explanation;
  ex.parent = lease.source;
  ex.parent_was_absorbed = lease.tier == Tier::kRam && s.Find(lease.source) == nullptr;

  Entry n;
  n.id = s.NewId();
  n.tokens = std::move(req.prompt);
  n.kv = std::move(req.kv);
  n.state = std::move(req.state);
  n.last_used = s.Touch();
  n.hintless = req.absorb_tails;
  const TokenSpan prompt = n.tokens;

  if (options_.mode == CacheMode::kExact) {
    // The previous design: whole snapshots at m - guard and at m, nothing shared.
    const EntryId full_id = n.id;
    std::vector<Entry> snapshots;
    for (const CapturedState& c : req.captured) {
      if (c.kind != PointKind::kGuard || c.n >= m) continue;
      Entry g;
      g.id = s.NewId();
      g.tokens.assign(prompt.begin(), prompt.begin() + c.n);
      g.kv = n.kv->Prefix(c.n);
      g.state = c.state;
      g.last_used = n.last_used;
      snapshots.push_back(std::move(g));
    }
    snapshots.push_back(std::move(n));
    for (Entry& e : snapshots) {
      if (EntryId same = s.SameTokens(e.tokens); same != kNoEntry && s.Find(same)->leases == 0) {
        s.Take(same);
        if (s.disk()) s.disk()->Erase(same);
      }
      s.PutToDisk(e);
      s.Add(std::move(e));
    }
    out.entry = full_id;
    s.EnforceBudgets(&ex);
    if (!s.Find(out.entry)) out.entry = kNoEntry;
    ex.entry = out.entry;
    return out;
  }

  std::vector<CapturedState> anchors, rungs;
  int64_t top_anchor = 0;
  for (const CapturedState& c : req.captured)
    if (c.kind == PointKind::kAnchor) top_anchor = std::max(top_anchor, c.n);
  for (CapturedState& c : req.captured) {
    if (c.kind == PointKind::kAnchor) {
      anchors.push_back(c);
    } else if (options_.anchor_rungs && c.kind == PointKind::kPeriodic && c.n < top_anchor) {
      rungs.push_back(c);  // planned with the new anchor: they stay with it (PlanCaptures)
    } else if (options_.recurrent && c.n < m) {
      n.checkpoints.push_back({c.n, c.kind, c.state});
    }
  }

  // Absorption: stored entries this prompt extends (whole prefixes, or past
  // their rendered history's end) become checkpoints of the new entry.
  std::vector<EntryId> to_absorb;
  s.tree().Walk(prompt, m, [&](const TreePoint& p) {
    if (s.Find(p.entry)->anchor) return;
    const bool whole = p.kind == PointKind::kEntryEnd;
    const bool past_history = p.kind == PointKind::kHistoryEnd && options_.absorb_past_history_end;
    if ((whole || past_history) &&
        std::find(to_absorb.begin(), to_absorb.end(), p.entry) == to_absorb.end()) {
      to_absorb.push_back(p.entry);
    }
  });
  std::vector<EntryId> tail_absorbed;
  if (req.absorb_tails) {
    std::vector<EntryId> on_path;
    s.tree().Walk(prompt, m, [&](const TreePoint& p) {
      if (std::find(on_path.begin(), on_path.end(), p.entry) == on_path.end()) on_path.push_back(p.entry);
    });
    for (EntryId id : on_path) {
      const Entry* e = s.Find(id);
      if (e->anchor || std::find(to_absorb.begin(), to_absorb.end(), id) != to_absorb.end()) continue;
      const int64_t shared = CommonPrefix(prompt, e->tokens);
      if (!LeftAtItsLastBlock(*e, shared, options_.structural_block_tokens)) continue;
      const bool only_tail = std::all_of(e->checkpoints.begin(), e->checkpoints.end(), [&](const Checkpoint& c) {
        return c.n <= shared || c.kind == PointKind::kGuard || c.kind == PointKind::kFinal;
      });
      if (only_tail) {
        to_absorb.push_back(id);
        tail_absorbed.push_back(id);
      }
    }
  }
  for (EntryId id : to_absorb) {
    Entry e = s.Take(id);
    const int64_t shared = CommonPrefix(prompt, e.tokens);
    if (shared == e.num_tokens() && shared < m && e.state) n.checkpoints.push_back({shared, PointKind::kFinal, e.state});
    // A tail-absorbed entry hands over only the point where this prompt left
    // it (where the next sibling will leave too); its older points served
    // turns that are over, and each costs a whole state.
    const bool tail = std::find(tail_absorbed.begin(), tail_absorbed.end(), id) != tail_absorbed.end();
    for (const Checkpoint& c : e.checkpoints) {
      if (tail && c.n != shared && !c.branch) continue;
      if (c.n > shared || c.n >= m) continue;
      n.checkpoints.push_back(c);
      if (c.kind == PointKind::kHistoryEnd && LeftInsideGenerationPrompt(e, c.n, shared)) {
        n.checkpoints.back().kind = PointKind::kFinal;
      }
    }
    ex.absorbed.push_back(id);
    ++s.counters().absorptions;
  }
  // A source restored from disk at its whole length is absorbed the same way.
  std::vector<EntryId> erase_from_disk = ex.absorbed;
  bool source_absorbed = std::find(to_absorb.begin(), to_absorb.end(), lease.source) != to_absorb.end();
  if (lease.tier == Tier::kDisk && lease.kind == PointKind::kEntryEnd && !lease.source_anchor &&
      lease.length < m) {
    if (lease.state) n.checkpoints.push_back({lease.length, PointKind::kFinal, lease.state});
    erase_from_disk.push_back(lease.source);
    ex.absorbed.push_back(lease.source);
    ++s.counters().absorptions;
    source_absorbed = true;
  }
  if (!source_absorbed) KeepBranchPoint(s, lease, req.restored, n);
  s.NormalizeAndThin(n, &ex);
  out.entry = n.id;
  s.PutToDisk(n);
  s.Add(std::move(n));

  for (const CapturedState& c : anchors) {
    if (s.AnchorAt(prompt, c.n) != kNoEntry) continue;  // a concurrent request pinned it first
    Entry anchor;
    anchor.id = s.NewId();
    anchor.tokens.assign(prompt.begin(), prompt.begin() + c.n);
    const Entry* owner = s.Find(out.entry);
    anchor.kv = c.n == m ? owner->kv : owner->kv->Prefix(c.n);
    anchor.state = c.state;
    anchor.anchor = true;
    if (c.n == top_anchor)
      for (const CapturedState& rung : rungs) anchor.checkpoints.push_back({rung.n, rung.kind, rung.state});
    anchor.last_used = s.Touch();
    ex.anchors_created.push_back(anchor.id);
    s.PutToDisk(anchor);
    s.Add(std::move(anchor));
  }
  if (DiskTier* disk = s.disk()) {
    for (EntryId id : erase_from_disk) disk->Erase(id);
  }
  s.EnforceBudgets(&ex);
  if (!s.Find(out.entry)) out.entry = kNoEntry;
  ex.entry = out.entry;
  return out;
}

// ---- End of generation (§3.3) ----

Result<CommitExplanation> LineageCache::ExtendAfterGeneration(EntryId id, TokenSpan tokens, KvPtr kv,
                                                              RecurrentPtr state) {
  const auto len = static_cast<int64_t>(tokens.size());
  if (!kv || kv->num_tokens() != len) return InvalidArgument("cache extend: KV length differs from the tokens");
  LINEAGE_RETURN_IF_ERROR(ValidateState(options_, state, "at the reply end"));
  std::lock_guard<std::mutex> lock(mu_);
  CacheStore& s = impl_->store;
  CommitExplanation ex;
  ex.entry = id;
  if (options_.mode == CacheMode::kExact) return ex;  // the previous design did not extend
  Entry* found = s.Find(id);
  if (!found) return NotFound("cache extend: entry " + std::to_string(id) + " left RAM or was absorbed");
  if (found->anchor) return InvalidArgument("cache extend: anchors do not grow");
  if (len < found->num_tokens() || CommonPrefix(tokens, found->tokens) != found->num_tokens()) {
    return InvalidArgument("cache extend: tokens do not continue the entry");
  }
  if (len == found->num_tokens()) return ex;
  Entry e = s.Take(id);
  // Without hints a next prompt leaves the reply where it pleases (in block
  // traffic at a block boundary at or below the prompt end): the prompt end
  // stays a restore point only where it saves a state's worth of tokens over
  // the entry's newest checkpoint.
  const int64_t below = e.checkpoints.empty() ? 0 : e.checkpoints.back().n;
  const bool keep_end = !e.hintless || e.num_tokens() - below >= StructuralSpacing(options_);
  if (e.state && keep_end) e.checkpoints.push_back({e.num_tokens(), PointKind::kFinal, e.state});
  e.tokens.assign(tokens.begin(), tokens.end());
  e.kv = std::move(kv);
  e.state = std::move(state);
  e.last_used = s.Touch();
  s.NormalizeAndThin(e, &ex);
  s.PutToDisk(e);
  s.Add(std::move(e));
  s.EnforceBudgets(&ex);
  return ex;
}

// ---- In-flight sharing ----

uint64_t LineageCache::RegisterPrefill(TokenSpan prompt, int64_t progress_tokens, std::vector<int64_t> planned) {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->in_flight.Add(prompt, progress_tokens, std::move(planned));
}

void LineageCache::EndPrefill(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->in_flight.Remove(id);
}

void LineageCache::PrefillProgress(uint64_t id, int64_t progress_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->in_flight.SetProgress(id, progress_tokens);
}

std::optional<SharedWait> LineageCache::FindSharedPrefill(uint64_t self, TokenSpan prompt, int64_t restore_tokens) {
  if (!SharesInFlight(options_)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->in_flight.FindWait(self, prompt, restore_tokens, options_.divergence_min_gain_tokens);
}

std::vector<int64_t> LineageCache::WantedCaptures(uint64_t id, int64_t from_tokens, int64_t to_tokens) const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->in_flight.WantedIn(id, from_tokens, to_tokens);
}

bool LineageCache::IsWantedCapture(uint64_t id, int64_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->in_flight.IsWanted(id, n);
}

void LineageCache::PublishCapture(uint64_t id, int64_t n, KvPtr kv, RecurrentPtr state) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->in_flight.Publish(id, n, std::move(kv), std::move(state));
}

SharedState LineageCache::TakeShared(const SharedWait& wait, KvPtr* kv, RecurrentPtr* state) {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->in_flight.Take(wait, kv, state);
}

void LineageCache::AbandonShared(const SharedWait& wait) {
  std::lock_guard<std::mutex> lock(mu_);
  impl_->in_flight.Abandon(wait);
}

// ---- Introspection ----

CacheStats LineageCache::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  const CacheStore& s = impl_->store;
  CacheStats st;
  st.entries = static_cast<int64_t>(s.entries().size());
  st.anchors = s.num_anchors();
  for (const auto& [id, e] : s.entries()) st.checkpoints += static_cast<int64_t>(e.checkpoints.size());
  st.ram_bytes = s.ram().total_bytes();
  st.ram_budget_bytes = options_.ram_budget_bytes;
  st.kv_bytes = s.ram().kv_bytes();
  st.recurrent_bytes = s.ram().blob_bytes();
  st.anchor_bytes = s.anchor_ledger().total_bytes();
  const CacheCounters& c = s.counters();
  st.peak_ram_bytes = c.peak_ram_bytes;
  st.live_leases = s.live_leases();
  st.evictions = c.evictions;
  st.absorptions = c.absorptions;
  st.thinned = c.thinned;
  st.trimmed = c.trimmed;
  st.lookups = c.lookups;
  st.restored_tokens = c.restored_tokens;
  st.disk_restores = c.disk_restores;
  if (s.disk()) st.disk = s.disk()->Stats();
  return st;
}

std::vector<LineageCache::EntryInfo> LineageCache::Entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EntryInfo> out;
  const ByteLedger& ram = impl_->store.ram();
  for (const auto& [id, e] : impl_->store.entries()) {
    EntryInfo info{id, e.tokens, e.anchor, e.last_used, e.used_ms, e.leases, e.checkpoints};
    const int64_t page_bytes = e.kv ? e.kv->page_bytes() : 0;
    if (e.kv) {
      for (PageId page : e.kv->page_ids()) {
        info.bytes += page_bytes;
        if (ram.References(page) > 1) info.shared_bytes += page_bytes;
      }
    }
    // Distinct states with this entry's own references to each: a state is
    // shared when something else holds it too.
    std::vector<std::pair<const RecurrentBlob*, int64_t>> states;
    auto hold = [&](const RecurrentBlob* blob) {
      if (!blob) return;
      auto it = std::find_if(states.begin(), states.end(), [&](const auto& s) { return s.first == blob; });
      if (it == states.end()) states.push_back({blob, 1});
      else ++it->second;
    };
    hold(e.state.get());
    for (const Checkpoint& c : e.checkpoints) hold(c.state.get());
    for (const auto& [blob, own] : states) {
      info.bytes += blob->bytes();
      if (ram.References(blob) > own) info.shared_bytes += blob->bytes();
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const EntryInfo& a, const EntryInfo& b) { return a.id < b.id; });
  return out;
}

Status LineageCache::CheckInvariants() const {
  std::lock_guard<std::mutex> lock(mu_);
  return impl_->store.CheckInvariants();
}

}  // namespace lineage::cache
