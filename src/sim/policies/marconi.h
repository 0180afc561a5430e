// Marconi: a radix tree over every finished sequence (prompt + reply) that
// keeps recurrent states only at branch points and at each sequence's last
// token; eviction scores candidates by FLOPs saved per byte blended with
// recency (docs/policies.md).
//
// Built on SegTrie (one node per segment): a branch point is the node where a
// new sequence leaves an existing path. States are admitted when a request
// finishes, as Marconi does.
#pragma once

#include <unordered_map>

#include "sim/policy.h"
#include "sim/seg_trie.h"

namespace lineage::sim {

class MarconiPolicy final : public Policy {
 public:
  MarconiPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "marconi"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView&, int64_t) override {}
  void Finish(const RequestView& r, int64_t now_ms) override;
  PolicyCounters counters() const override { return counters_; }

  double recency_weight = 1.0;  // alpha of Marconi's utility: recency + alpha x efficiency
  double efficiency_weight = 1.0;

 private:
  struct NodeInfo {
    bool state = false;
    int32_t ends = 0;            // sequences inserted that end here
    int64_t last_used_ms = 0;
  };
  NodeInfo& Info(SegTrie::NodeId id);
  int64_t Bytes() const;
  void Enforce();

  ModelShape shape_;
  PolicyOptions options_;
  SegTrie trie_;
  std::vector<NodeInfo> info_;
  std::unordered_map<int64_t, int64_t> branch_of_;  // request index -> matched length at admission
  int64_t num_states_ = 0;
  PolicyCounters counters_;
};

}  // namespace lineage::sim
