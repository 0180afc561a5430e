#include "sim/policies/oracle.h"

#include <algorithm>

namespace lineage::sim {

Admission OraclePolicy::Admit(const RequestView& r, int64_t) {
  const Request& q = *r.request;
  Admission a;
  a.restore_tokens = std::min(trie_.Longest(q.prompt).tokens, q.num_prompt_tokens - 1);
  return a;
}

void OraclePolicy::Commit(const RequestView& r, int64_t) {
  trie_.Insert(r.request->prompt);
  Recount();
}

void OraclePolicy::Finish(const RequestView& r, int64_t) {
  trie_.Insert(PromptAndOutput(*r.request));
  Recount();
}

// The oracle's memory is reported as the KV of every distinct token it has
// seen; the recurrent state at every token it pretends to hold is not charged.
void OraclePolicy::Recount() {
  ChargeRam(counters_, trie_.live_tokens() * shape_.kv_bytes_per_token - counters_.ram_bytes);
}

}  // namespace lineage::sim
