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
  LINEAGE_RETURN_IF_ERROR(CheckRestoreShape(d.lookup_.restore, d.prompt_tokens_, cache.options().recurrent));
  return d;
}

std::vector<int64_t> RequestDriver::CapturesIn(int64_t from_tokens, int64_t to_tokens) const {
  std::vector<int64_t> out;
  for (const PlannedCapture& c : lookup_.captures) {
    if (c.n > from_tokens && c.n <= to_tokens) out.push_back(c.n);
  }
  return out;
}

bool RequestDriver::Captured(int64_t n, RecurrentPtr state) {
  auto planned = std::find_if(lookup_.captures.begin(), lookup_.captures.end(),
                              [&](const PlannedCapture& p) { return p.n == n; });
  if (planned == lookup_.captures.end()) return false;
  captured_.push_back({n, planned->kind, std::move(state)});
  return true;
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
  Result<CommitResult> res = cache_->Commit(std::move(req));
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
