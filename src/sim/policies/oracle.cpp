#include "sim/policies/oracle.h"

#include <algorithm>
#include <cmath>

namespace lineage::sim {

int64_t OraclePolicy::ComputedTokens(const Running& r, int64_t now_ms) const {
  const int64_t m = r.request->num_prompt_tokens;
  if (r.commit_ms < 0) {
    const double prefilled = std::floor(static_cast<double>(now_ms - r.start_ms) / 1000.0 * shape_.prefill_tokens_per_s);
    return std::min(m, r.restore + static_cast<int64_t>(prefilled));
  }
  const double decoded = std::floor(static_cast<double>(now_ms - r.commit_ms) / 1000.0 / shape_.decode_s_per_token);
  return m + std::min<int64_t>(r.request->output.num_tokens, static_cast<int64_t>(decoded));
}

Admission OraclePolicy::Admit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  int64_t best = tree_.Longest(SequenceTokens(q.prompt));
  for (const auto& [index, run] : running_) {
    const int64_t computed = ComputedTokens(run, now_ms);
    if (computed <= best) continue;
    const int64_t shared = run.commit_ms < 0 ? Lcp(q.prompt, run.request->prompt)
                                             : Lcp(q.prompt, PromptAndOutput(*run.request));
    best = std::max(best, std::min(shared, computed));
  }
  Admission a;
  a.restore_tokens = std::min(best, q.num_prompt_tokens - 1);
  if (zero_latency_) {
    tree_.Insert(SequenceTokens(PromptAndOutput(q)));
    Recount();
  } else {
    running_[r.index] = {&q, now_ms, a.restore_tokens, -1};
  }
  return a;
}

void OraclePolicy::Commit(const RequestView& r, int64_t now_ms) {
  if (zero_latency_) return;
  tree_.Insert(SequenceTokens(r.request->prompt));
  running_[r.index].commit_ms = now_ms;
  Recount();
}

void OraclePolicy::Finish(const RequestView& r, int64_t) {
  if (zero_latency_) return;
  tree_.Insert(SequenceTokens(PromptAndOutput(*r.request)));
  running_.erase(r.index);
  Recount();
}

// The oracle's memory is reported as the KV of every distinct token it has
// seen; the recurrent state at every token it pretends to hold is not charged.
void OraclePolicy::Recount() {
  ChargeRam(counters_, tree_.live_tokens() * shape_.kv_bytes_per_token - counters_.ram_bytes);
}

}  // namespace lineage::sim
