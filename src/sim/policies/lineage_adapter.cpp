#include "sim/policies/lineage_adapter.h"

#include <algorithm>
#include <cmath>

namespace lineage::sim {
namespace {

void AppendTokens(std::span<const Segment> segments, cache::Tokens& out) {
  for (const Segment& s : segments)
    for (uint32_t i = 0; i < s.num_tokens; ++i) out.push_back(static_cast<cache::TokenId>(TokenAt(s.id, i)));
}

}  // namespace

LineagePolicy::LineagePolicy(const ModelShape& shape, const PolicyOptions& options, bool exact,
                             const cache::CacheOptions& base, std::string name, cache::DiskTier* disk,
                             cache::PageAllocator* pages)
    : shape_(shape),
      exact_(exact),
      name_(name.empty() ? (exact ? "exact" : "lineage") : std::move(name)),
      pages_(pages ? pages : &own_pages_) {
  payload_.page_tokens = 64;
  payload_.page_bytes = payload_.page_tokens * shape.kv_bytes_per_token;
  payload_.blob_bytes = shape.recurrent_bytes;
  cache::CacheOptions o = base;
  o.mode = exact ? cache::CacheMode::kExact : cache::CacheMode::kLineage;
  o.recurrent = !shape.attention_only();
  o.ram_budget_bytes = options.ram_budget_bytes;
  o.state_bytes = shape.recurrent_bytes;
  o.kv_bytes_per_token = shape.kv_bytes_per_token;
  if (disk == nullptr && options.disk_budget_bytes > 0) {
    own_disk_ = std::make_unique<cache::MemoryDiskTier>(options.disk_budget_bytes, pages_);
    disk = own_disk_.get();
  }
  disk_ = disk;
  cache_ = std::make_unique<cache::LineageCache>(o, disk_);
}

void LineagePolicy::Fail(const Status& st) {
  if (status_.ok()) status_ = st.With(name());
}

void LineagePolicy::UpdateProgress(const Progress& progress) {
  for (auto& [index, f] : in_flight_) {
    if (f.driver.committed() || f.driver.prefill_id() == 0) continue;
    const int64_t done = progress.FrontierTokens(index);
    if (done >= 0) f.driver.Progress(std::min(f.driver.prompt_tokens(), done));
  }
}

int64_t LineagePolicy::ShareFromOwner(cache::RequestDriver& waiter) {
  const cache::SharedWait w = *waiter.wait();
  auto owner = prefill_owner_.find(w.owner);
  if (owner == prefill_owner_.end()) {
    waiter.StopWaiting();
    return -1;
  }
  InFlight& o = in_flight_.at(owner->second);
  // The simulator prefilled the owner at once: its state at n exists; the
  // machine holds the waiter until the owner has really computed n tokens.
  o.driver.Captured(w.n, o.seq->StateAt(w.n));
  o.driver.Publish([&] { return o.seq->Kv(); });
  if (waiter.TakeShared() != cache::SharedState::kReady) {
    waiter.StopWaiting();
    return -1;
  }
  return owner->second;
}

Admission LineagePolicy::Admit(const RequestView& r, int64_t) {
  const Request& q = *r.request;
  cache::Tokens prompt;
  prompt.reserve(static_cast<size_t>(q.num_prompt_tokens + q.output.num_tokens));
  AppendTokens(q.prompt, prompt);
  cache::LookupHints hints;
  // The trace states the shared prefix and the history end as the server
  // gave them to its cache.
  hints.anchor_tokens = q.anchor_tokens;
  hints.history_end_tokens = q.history_end_tokens;
  hints.system_end_tokens = q.system_end_tokens;
  const int64_t read_before = disk_ ? disk_->Stats().bytes_read : 0;
  if (r.progress) UpdateProgress(*r.progress);
  Result<cache::RequestDriver> driver = cache::RequestDriver::Begin(*cache_, std::move(prompt), hints);
  if (!driver.ok()) {
    Fail(driver.status().With("request " + std::to_string(r.index)));
    return {};
  }
  InFlight f{std::move(driver).value(), std::make_unique<cache::CountedSequence>(pages_, payload_)};
  Admission a;
  if (f.driver.waiting()) a.wait_for = ShareFromOwner(f.driver);
  const cache::RestorePoint& rp = f.driver.restore();
  const cache::TokenSpan tokens(f.driver.prompt());
  Status safe = cache::VerifyRestore(tokens, rp, !shape_.attention_only());
  if (!safe.ok()) {
    Fail(safe.With("request " + std::to_string(r.index)));
    return a;
  }
  a.restore_tokens = rp.length;
  f.seq->Admit(tokens, rp);
  for (cache::CapturedState& c : f.seq->Prefill(tokens, f.driver.lookup().captures))
    f.driver.Captured(c.n, std::move(c.state));
  // Admission copies the recurrent state and the page holding r, if r is
  // inside one; the previous design cloned the whole snapshot instead.
  if (a.restore_tokens > 0 && exact_) {
    a.ram_copy_bytes = shape_.SnapshotBytes(a.restore_tokens);
  } else if (a.restore_tokens > 0) {
    a.ram_copy_bytes = shape_.recurrent_bytes;
    if (a.restore_tokens % payload_.page_tokens != 0) a.ram_copy_bytes += payload_.page_bytes;
  }
  if (disk_) a.disk_read_bytes = disk_->Stats().bytes_read - read_before;
  if (f.driver.prefill_id() != 0) prefill_owner_[f.driver.prefill_id()] = r.index;
  in_flight_[r.index] = std::move(f);
  return a;
}

void LineagePolicy::Commit(const RequestView& r, int64_t) {
  auto it = in_flight_.find(r.index);
  if (it == in_flight_.end()) return;
  InFlight& f = it->second;
  prefill_owner_.erase(f.driver.prefill_id());
  Result<cache::CommitResult> res = f.driver.Commit(f.seq->Kv(), f.seq->State());
  if (!res.ok()) {
    Fail(res.status());
    in_flight_.erase(it);
  }
}

void LineagePolicy::Finish(const RequestView& r, int64_t) {
  auto it = in_flight_.find(r.index);
  if (it == in_flight_.end()) return;
  InFlight& f = it->second;
  const Request& q = *r.request;
  if (q.output.num_tokens > 0 && f.driver.entry() != cache::kNoEntry) {
    cache::Tokens reply;
    AppendTokens(std::span(&q.output, 1), reply);
    f.seq->Append(reply);
    Status ext = f.driver.Extend(f.seq->tokens(), f.seq->Kv(), f.seq->State());
    if (!ext.ok()) Fail(ext);
  }
  in_flight_.erase(it);
}

PolicyCounters LineagePolicy::counters() const {
  cache::CacheStats s = cache_->Stats();
  PolicyCounters c;
  c.ram_bytes = s.ram_bytes;
  c.ram_peak_bytes = s.peak_ram_bytes;
  c.disk_bytes = s.disk.bytes;
  c.disk_written_bytes = s.disk.bytes_written;
  c.disk_read_bytes = s.disk.bytes_read;
  c.evictions = s.evictions + s.disk.evictions;
  return c;
}

}  // namespace lineage::sim
