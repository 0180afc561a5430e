// SGLang's MambaRadixCache (python/sglang/srt/mem_cache/mamba_radix_cache.py):
// a token radix tree of KV whose nodes may hold a recurrent ("mamba") state.
// - A finished request inserts its prompt + reply with its final state at the
//   node ending there (cache_finished_req). Chunked prefill inserts each
//   chunk's tokens with the state at the chunk's end as the chunk finishes
//   (cache_unfinished_req forks the request's state into the tree), so later
//   requests see a running prefill's finished chunks. A prompt whose KV
//   match runs past its deepest state keeps the state at the branch point
//   (the match floored to the recurrent kernel's 64-token chunk), inserted
//   when its prefill passes it.
// - A match restores at the deepest node on the matched path that holds a
//   state; a split leaves the upper node without one (a "tombstone").
// - Two pools, as SGLang sizes them: recurrent states get
//   mamba_full_memory_ratio / (1 + ratio) of the budget, KV the rest. Each is
//   LRU: KV evicts the least recently used leaf (with its state), then every
//   stateless leaf above it; the state pool evicts the least recently used
//   state, tombstoning an inner node or evicting a leaf. A match refreshes its
//   path with the child more recent than its parent, so states nearer the
//   root leave first. RAM only (docs/policies.md).
#pragma once

#include <set>
#include <unordered_map>

#include "sim/policy.h"
#include "sim/token_radix.h"

namespace lineage::sim {

class SglangPolicy final : public PeerPolicy {
 public:
  SglangPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "sglang"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;

  static constexpr double kMambaFullMemoryRatio = 0.9;  // SGLang's default
  static constexpr int64_t kChunkTokens = 64;           // the recurrent kernel's chunk (FLA)
  // --chunked-prefill-size when no GPU memory is known (server_args.py).
  int64_t chunked_prefill_tokens = 4096;

 private:
  struct NodeInfo {
    bool state = false;
    uint64_t stamp = 0;  // last access; larger = more recent
  };
  NodeInfo& Info(TokenRadix::NodeId id);
  // Refreshes the path root -> id, each child more recent than its parent.
  void TouchPath(TokenRadix::NodeId id);
  void SetStamp(TokenRadix::NodeId id, uint64_t stamp);
  void AddState(TokenRadix::NodeId id);
  void DropState(TokenRadix::NodeId id);
  // Inserts the first `len` tokens with a state at their end.
  void InsertWithState(const std::vector<uint32_t>& tokens, int64_t len);
  // Removes leaf `id` (its KV and state), then every stateless leaf above it.
  void EvictLeaf(TokenRadix::NodeId id);
  void Enforce();

  int64_t kv_capacity_tokens_ = 0;
  int64_t state_capacity_ = 0;
  TokenRadix tree_;
  std::vector<NodeInfo> info_;
  uint64_t clock_ = 0;
  std::set<std::pair<uint64_t, TokenRadix::NodeId>> full_lru_;   // every node but the root
  std::set<std::pair<uint64_t, TokenRadix::NodeId>> state_lru_;  // nodes holding a state
  int64_t num_states_ = 0;
  struct Running {
    const Request* request = nullptr;
    int64_t next_chunk_end = 0;  // the next chunk end to insert
    int64_t branch = 0;          // branch point still to insert; 0: none
  };
  // Inserts what request `run` has prefilled up to `done` tokens: chunk ends
  // and the branch point.
  void InsertPrefilled(Running& run, int64_t done);
  std::unordered_map<int64_t, Running> running_;  // by request index
};

}  // namespace lineage::sim
