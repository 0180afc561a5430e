// Periodic: the radix-trie + periodic-checkpoint design (Rapid-MLX style).
// KV is shared across lineages through a trie; each lineage keeps recurrent
// checkpoints every `interval_tokens` of what it prefilled plus its end, at
// most `max_checkpoints`, thinned by dropping the point closest to its
// predecessor; whole lineages leave by LRU when the byte budget is exceeded.
// See docs/policies.md for what it models and what it leaves out.
#pragma once

#include <list>
#include <unordered_map>

#include "sim/policy.h"
#include "sim/token_radix.h"

namespace lineage::sim {

class PeriodicPolicy final : public PeerPolicy {
 public:
  PeriodicPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "periodic"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView&, int64_t) override {}

  int64_t interval_tokens = 2048;
  int64_t max_checkpoints = 4;

 private:
  struct Lineage {
    std::vector<Segment> seq;
    int64_t num_tokens = 0;
    std::vector<int64_t> checkpoints;  // ascending; the last is num_tokens
    TokenRadix::NodeId node = TokenRadix::kRoot;
    int64_t last_used_ms = 0;
  };
  struct Pending {
    int64_t lineage = -1;  // the lineage restored from; -1 = cold
    int64_t restore = 0;
  };
  void AddCheckpoints(Lineage& l, int64_t from_exclusive, int64_t to);
  void Thin(Lineage& l) const;
  void Drop(int64_t id);
  int64_t Bytes() const;
  void Enforce();

  TokenRadix tree_;
  std::unordered_map<int64_t, Lineage> lineages_;
  std::unordered_map<int64_t, Pending> pending_;  // by request index
  int64_t next_id_ = 0;
  int64_t num_checkpoints_ = 0;
};

}  // namespace lineage::sim
