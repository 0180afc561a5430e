#include "sim/policies/oracle.h"

#include <algorithm>

namespace lineage::sim {

Admission OraclePolicy::Admit(const RequestView& r, int64_t) {
  const Request& q = *r.request;
  const int64_t cap = q.num_prompt_tokens - 1;
  const int64_t finished = std::min(tree_.Longest(SequenceTokens(q.prompt)), cap);
  Admission a;
  a.restore_tokens = finished;
  // A running request that shares more, waited for if it has not computed
  // that far yet; at equal length, one that needs no wait.
  for (const auto& [index, run] : running_) {
    const int64_t shared = std::min(Lcp(q.prompt, PromptAndOutput(*run)), cap);
    if (shared < a.restore_tokens) continue;
    const int64_t have = r.progress ? r.progress->ComputedTokens(index) : -1;
    const bool ready = have < 0 || have >= shared;
    if (shared > a.restore_tokens) {
      a.restore_tokens = shared;
      a.wait_for = ready ? -1 : index;
    } else if (ready) {
      a.wait_for = -1;
    }
  }
  running_[r.index] = &q;
  return a;
}

// The oracle's memory is reported as the KV of every distinct token it has
// seen; the recurrent state at every token it pretends to hold is not charged.
void OraclePolicy::Finish(const RequestView& r, int64_t) {
  tree_.Insert(SequenceTokens(PromptAndOutput(*r.request)));
  running_.erase(r.index);
  ChargeRam(counters_, tree_.live_tokens() * shape_.kv_bytes_per_token - counters_.ram_bytes);
}

}  // namespace lineage::sim
