// Oracle: unbounded memory and a restore point at every token. A request
// restores the longest common prefix with any prompt committed before it, or
// any prompt + reply finished before it, capped at m - 1. The upper bound
// every other prefix-restoring policy is measured against (docs/policies.md).
#pragma once

#include "sim/policy.h"
#include "sim/seg_trie.h"

namespace lineage::sim {

class OraclePolicy final : public Policy {
 public:
  explicit OraclePolicy(const ModelShape& shape) : shape_(shape) {}
  std::string name() const override { return "oracle"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;
  PolicyCounters counters() const override { return counters_; }

 private:
  void Recount();
  ModelShape shape_;
  SegTrie trie_;
  PolicyCounters counters_;
};

}  // namespace lineage::sim
