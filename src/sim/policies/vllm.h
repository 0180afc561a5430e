// vLLM v1 prefix caching for hybrid models in "align" mode
// (--mamba-cache-mode align): the KV cache is a pool of fixed-size blocks
// named by chained hashes; for a hybrid model the attention block size is
// raised so that one attention page holds at least one recurrent-state page
// (VllmBlockTokens), and the recurrent state is kept at every block boundary.
// A prompt hits the longest chain of cached full blocks, so a restore point
// is always a block boundary; free blocks leave by LRU (a sequence's last
// block first). RAM only (docs/policies.md).
#pragma once

#include <list>
#include <unordered_map>

#include "sim/block_hashes.h"
#include "sim/policy.h"

namespace lineage::sim {

// vLLM's block size for `shape`: attention-only models 16 tokens; hybrid
// models the smallest multiple of 16 tokens whose per-layer attention page
// (tokens x KV bytes per token of one layer) holds one layer's recurrent state.
int64_t VllmBlockTokens(const ModelShape& shape);

class VllmPolicy final : public PeerPolicy {
 public:
  VllmPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "vllm"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;

  int64_t block_tokens() const { return block_tokens_; }

 private:
  // Caches the full blocks of `seq` (touching those already cached).
  void CacheBlocks(std::span<const Segment> seq);
  // Moves blocks to the most recently used end, the first block last so that
  // a sequence's tail leaves before its head (vLLM frees blocks in reverse).
  void Touch(const std::vector<uint64_t>& hashes, size_t count);
  void Enforce();

  int64_t block_tokens_;
  int64_t block_bytes_;
  std::list<uint64_t> lru_;  // front = most recently used
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> blocks_;
};

}  // namespace lineage::sim
