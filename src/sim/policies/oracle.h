// Oracle: unbounded memory and a restore point at every token: the bound
// every policy is measured against (docs/policies.md). A request restores
// the longest common prefix of its prompt with the prompt + reply of any
// request admitted before it, capped at m - 1. When that prefix belongs to a
// request still running and not yet computed that far, it waits for it
// (Admission::wait_for), as lineage's in-flight sharing does; its TTFT
// carries the wait. No policy restores more: every policy's sequences are
// prefixes of earlier requests' prompts and replies.
#pragma once

#include <map>

#include "sim/policy.h"
#include "sim/token_radix.h"

namespace lineage::sim {

class OraclePolicy final : public PeerPolicy {
 public:
  explicit OraclePolicy(const ModelShape& shape) : PeerPolicy(shape, {}) {}  // no budgets: unbounded memory
  std::string name() const override { return "oracle"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView&, int64_t) override {}
  void Finish(const RequestView& r, int64_t now_ms) override;

 private:
  TokenRadix tree_;                              // prompt + reply of every finished request
  std::map<int64_t, const Request*> running_;    // by request index
};

}  // namespace lineage::sim
