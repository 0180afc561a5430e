// Oracle: unbounded memory and a restore point at every token: the upper
// bound every other prefix-restoring policy is measured against
// (docs/policies.md). Two forms:
// - `oracle`: a prefix is restorable as soon as it has been computed: the part
//   of a running request's prompt prefilled so far (at the shape's prefill
//   speed from its own restore point), then its prompt + the reply tokens
//   decoded so far, and every finished sequence. A request restores the
//   longest common prefix with any of them, capped at m - 1.
// - `oracle-zero-latency`: every request's prompt + reply exists the instant
//   it arrives (prefill and decode take no time); the bound for a machine
//   infinitely fast, which no cache on a real one can reach.
#pragma once

#include <map>

#include "sim/policy.h"
#include "sim/token_radix.h"

namespace lineage::sim {

class OraclePolicy final : public PeerPolicy {
 public:
  explicit OraclePolicy(const ModelShape& shape, bool zero_latency = false)
      : PeerPolicy(shape, {}), zero_latency_(zero_latency) {}  // no budgets: unbounded memory
  std::string name() const override { return zero_latency_ ? "oracle-zero-latency" : "oracle"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;

 private:
  // A request between arrival and the end of its reply.
  struct Running {
    const Request* request = nullptr;
    int64_t start_ms = 0;      // arrival
    int64_t restore = 0;       // tokens it did not compute
    int64_t commit_ms = -1;    // end of its prefill; -1 while prefilling
  };
  // Tokens of `r`'s prompt + reply that exist at `now_ms`.
  int64_t ComputedTokens(const Running& r, int64_t now_ms) const;
  void Recount();
  bool zero_latency_;
  TokenRadix tree_;
  std::map<int64_t, Running> running_;  // by request index
};

}  // namespace lineage::sim
