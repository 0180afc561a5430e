// Marconi: a token-level radix tree over every finished sequence (prompt +
// reply) that keeps recurrent states only at branch points and at each
// sequence's last token; eviction scores candidates by FLOPs saved per byte
// blended with recency (docs/policies.md).
//
// Built on TokenRadix: a branch point is the token where a new sequence
// leaves an existing path, inside a segment or not (found at admission by
// walking the prompt, captured during its prefill). States are admitted when
// a request finishes, as Marconi does. Every leaf holds a state.
#pragma once

#include <unordered_map>

#include "sim/policy.h"
#include "sim/token_radix.h"

namespace lineage::sim {

class MarconiPolicy final : public PeerPolicy {
 public:
  MarconiPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "marconi"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView&, int64_t) override {}
  void Finish(const RequestView& r, int64_t now_ms) override;

  double recency_weight = 1.0;  // alpha of Marconi's utility: recency + alpha x efficiency
  double efficiency_weight = 1.0;

 private:
  struct NodeInfo {
    bool state = false;
    int64_t last_used_ms = 0;
  };
  NodeInfo& Info(TokenRadix::NodeId id);
  int64_t Bytes() const;
  // Bytes freed by evicting the state at `id` (with its unshared path when a leaf).
  int64_t FreedBytes(TokenRadix::NodeId id);
  void Evict(TokenRadix::NodeId id);
  void Enforce();

  TokenRadix tree_;
  std::vector<NodeInfo> info_;
  std::unordered_map<int64_t, int64_t> branch_of_;  // request index -> branch point found at admission
  int64_t num_states_ = 0;
};

}  // namespace lineage::sim
