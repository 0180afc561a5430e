#include "cache/request_driver.h"

#include <algorithm>
#include <string>

namespace lineage::cache {

namespace {

// The shape checks any payload allows; the simulator adds a token-level
// check of its counted payloads (VerifyRestore).
Status CheckRestoreShape(const RestorePoint& rp, int64_t m, bool recurrent) {
  const int64_t r = rp.length;
  if (r == 0) return Status::Ok();
  if (r < 0 || r >= m) return Internal("restore point " + std::to_string(r) + " outside [0, " + std::to_string(m) + ")");
  if (!rp.kv || rp.kv->num_tokens() != r) return Internal("restore point " + std::to_string(r) + " without its KV rows");
  if (recurrent && !rp.state) return Internal("restore point " + std::to_string(r) + " without a recurrent state");
  return Status::Ok();
}

}  // namespace

Result<RequestDriver> RequestDriver::Begin(LineageCache& cache, Tokens prompt, const LookupHints& hints) {
  RequestDriver d;
  d.cache_ = &cache;
  d.prompt_tokens_ = static_cast<int64_t>(prompt.size());
  LINEAGE_ASSIGN_OR_RETURN(d.lookup_, cache.Lookup(prompt, hints));
  d.prompt_ = std::move(prompt);
  d.hintless_ = Hintless(hints);
  LINEAGE_RETURN_IF_ERROR(CheckRestoreShape(d.lookup_.restore, d.prompt_tokens_, cache.options().recurrent));
  if (SharesInFlight(cache.options())) {
    // Look for a prefill to wait for before registering this one, so that
    // waits only point at earlier prefills.
    const int64_t r = d.lookup_.restore.length;
    d.registration_.cache = &cache;
    d.registration_.wait = cache.FindSharedPrefill(0, d.prompt_, r);
    std::vector<int64_t> planned;
    for (const PlannedCapture& c : d.lookup_.captures) planned.push_back(c.n);
    d.registration_.id = cache.RegisterPrefill(d.prompt_, r, std::move(planned));
  }
  return d;
}

void RequestDriver::Registration::End() {
  if (cache == nullptr) return;
  if (wait) cache->AbandonShared(*wait);
  if (id != 0) cache->EndPrefill(id);
  wait.reset();
  id = 0;
}

std::vector<int64_t> RequestDriver::CapturesIn(int64_t from_tokens, int64_t to_tokens) const {
  std::vector<int64_t> out;
  for (const PlannedCapture& c : lookup_.captures) {
    if (c.n > from_tokens && c.n <= to_tokens) out.push_back(c.n);
  }
  if (registration_.id != 0) {
    for (int64_t n : cache_->WantedCaptures(registration_.id, from_tokens, to_tokens)) out.push_back(n);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

bool RequestDriver::Captured(int64_t n, RecurrentPtr state) {
  // Once per point: a planned point another request waits for may be
  // reported again by whoever serves the wait.
  if (std::any_of(captured_.begin(), captured_.end(), [&](const CapturedState& c) { return c.n == n; })) return true;
  auto planned = std::find_if(lookup_.captures.begin(), lookup_.captures.end(),
                              [&](const PlannedCapture& p) { return p.n == n; });
  if (planned != lookup_.captures.end()) {
    captured_.push_back({n, planned->kind, std::move(state)});
    return true;
  }
  // A point another request waits for is also where the two prompts part:
  // it stays as a divergence checkpoint of this request's entry.
  if (registration_.id == 0 || !cache_->IsWantedCapture(registration_.id, n)) return false;
  captured_.push_back({n, PointKind::kDivergence, std::move(state)});
  return true;
}

SharedState RequestDriver::TakeShared() {
  if (!registration_.wait) return SharedState::kGone;
  KvPtr kv;
  RecurrentPtr state;
  const SharedState got = cache_->TakeShared(*registration_.wait, &kv, &state);
  if (got == SharedState::kPending) return got;
  const int64_t n = registration_.wait->n;
  registration_.wait.reset();
  if (got != SharedState::kReady) return got;
  RestorePoint rp;
  rp.length = n;
  rp.kind = PointKind::kDivergence;
  rp.tier = Tier::kRam;
  rp.kv = std::move(kv);
  rp.state = std::move(state);
  if (!CheckRestoreShape(rp, prompt_tokens_, cache_->options().recurrent).ok()) return SharedState::kGone;
  lookup_.lease.Release();
  lookup_.restore = std::move(rp);
  Progress(n);
  return got;
}

void RequestDriver::StopWaiting() {
  if (registration_.wait) cache_->AbandonShared(*registration_.wait);
  registration_.wait.reset();
}

void RequestDriver::Progress(int64_t n) {
  if (registration_.id != 0) cache_->PrefillProgress(registration_.id, n);
}

void RequestDriver::Publish(const std::function<KvPtr()>& kv_so_far) {
  if (registration_.id == 0) return;
  KvPtr kv;
  for (const CapturedState& c : captured_) {
    if (!cache_->IsWantedCapture(registration_.id, c.n)) continue;
    if (!kv) kv = kv_so_far();
    if (kv && c.n <= kv->num_tokens()) cache_->PublishCapture(registration_.id, c.n, kv, c.state);
  }
}

void RequestDriver::Release() {
  lookup_.lease.Release();
  registration_.End();
}

Result<CommitResult> RequestDriver::Commit(KvPtr kv, RecurrentPtr state) {
  if (cache_ == nullptr || committed_) return Internal("request driver: committed twice or never begun");
  committed_ = true;
  CommitRequest req;
  req.prompt = std::move(prompt_);
  req.kv = std::move(kv);
  req.state = std::move(state);
  req.captured = std::move(captured_);
  req.lease = std::move(lookup_.lease);
  req.absorb_tails = hintless_;
  const RestorePoint& from = lookup_.restore;
  if (!from.anchor) req.restored = {from.length, from.kind, from.state};
  Result<CommitResult> res = cache_->Commit(std::move(req));
  registration_.End();
  if (res.ok()) entry_ = res->entry;
  return res;
}

Result<CommitResult> RequestDriver::CommitPartial(int64_t n, KvPtr kv, RecurrentPtr state) {
  if (n >= prompt_tokens_) return Commit(std::move(kv), std::move(state));
  if (cache_ == nullptr || committed_ || n <= lookup_.restore.length || n <= 0) {
    Release();
    return CommitResult{};
  }
  prompt_.resize(static_cast<size_t>(n));
  captured_.erase(std::remove_if(captured_.begin(), captured_.end(), [&](const CapturedState& c) { return c.n > n; }),
                  captured_.end());
  return Commit(std::move(kv), std::move(state));
}

Status RequestDriver::Extend(TokenSpan tokens, KvPtr kv, RecurrentPtr state) {
  if (cache_ == nullptr || entry_ == kNoEntry || static_cast<int64_t>(tokens.size()) <= prompt_tokens_) {
    return Status::Ok();
  }
  Result<CommitExplanation> ext = cache_->ExtendAfterGeneration(entry_, tokens, std::move(kv), std::move(state));
  if (!ext.ok() && ext.status().code() != StatusCode::kNotFound) return ext.status();
  return Status::Ok();
}

}  // namespace lineage::cache
