// vLLM v1 prefix caching for hybrid models in "align" mode
// (--mamba-cache-mode align; vllm/v1/core/single_type_kv_cache_manager.py
// MambaManager, vllm/v1/core/sched/scheduler.py _mamba_block_aligned_split):
// the KV cache is a pool of fixed-size blocks named by chained hashes; for a
// hybrid model the attention block size is raised so that one attention page
// holds at least one recurrent-state page (VllmBlockTokens).
//
// Blocks are cached as each prefill chunk computes them, so a request sees
// the full blocks a running request has computed so far. The recurrent state
// is materialized only where a step ends on a block boundary: prefill chunks
// are cut to whole blocks (max_num_batched_tokens rounded down to blocks,
// at least one block), and to end at the prompt's last full block, so a
// prompt keeps a state every chunk and at its last full block; decode ends a
// step on every boundary it passes. A prompt hits the longest chain of cached
// blocks, restored at the deepest block on it that holds a state; free
// blocks leave by LRU (a sequence's last block first). RAM only
// (docs/policies.md).
#pragma once

#include <list>
#include <map>
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
  // vLLM's default token budget per step for the API server outside large
  // GPUs (vllm/engine/arg_utils.py get_batch_defaults: 2048, x world size 1).
  int64_t max_num_batched_tokens = 2048;

 private:
  struct Block {
    std::list<uint64_t>::iterator lru;
    bool state = false;  // the recurrent state at its end is cached too
  };
  struct Running {
    const Request* request = nullptr;
    int64_t restore = 0;
    int64_t cached_tokens = 0;  // prefix whose full blocks are cached
  };
  // Caches the full blocks of `seq` in [from, to) tokens (touching those
  // already cached); `stated(end)` says whether a block ending at `end`
  // holds a state.
  template <typename Stated>
  void CacheBlocks(std::span<const Segment> seq, int64_t to, Stated stated);
  // Whether the prefill of `run` materializes the state at block boundary `end`.
  bool PrefillState(const Running& run, int64_t end) const;
  // Caches what every running request has prefilled so far.
  void CatchUp(const Progress& progress);
  // Moves blocks to the most recently used end, the first block last so that
  // a sequence's tail leaves before its head (vLLM frees blocks in reverse).
  void Touch(const std::vector<uint64_t>& hashes, size_t count);
  void Enforce();

  int64_t block_tokens_;
  std::list<uint64_t> lru_;  // front = most recently used
  std::unordered_map<uint64_t, Block> blocks_;
  int64_t stated_blocks_ = 0;
  std::map<int64_t, Running> running_;  // by request index
};

}  // namespace lineage::sim
