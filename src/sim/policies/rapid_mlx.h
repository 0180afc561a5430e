// Rapid-MLX: the memory-aware prefix cache of raullenchai/Rapid-MLX as its
// code stands (vllm_mlx/memory_cache.py, scheduler.py, engine/batched.py).
// Entries are whole caches keyed by exact token sequences, each charged its
// own KV and state, LRU over a byte budget. On a hybrid model an entry
// restores only where its tokens are a strict prefix of the prompt (its
// recurrent layers cannot be trimmed), and at most 8 such entries are kept;
// a request stores three: at its message boundary during prefill, at its
// prompt end, and prompt + reply when it finishes. Attention-only caches
// also restore by supersequence and longest common prefix.
// See docs/policies.md for what it models and what it leaves out.
#pragma once

#include <list>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/policy.h"

namespace lineage::sim {

class RapidMlxPolicy final : public PeerPolicy {
 public:
  RapidMlxPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "rapid-mlx"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView& r, int64_t now_ms) override;
  void Finish(const RequestView& r, int64_t now_ms) override;

  // --hybrid-cache-entries, auto-set for hybrid models (cli.py
  // _DEFAULT_HYBRID_CACHE_ENTRIES) and MemoryCacheConfig.max_entries.
  int64_t hybrid_max_entries = 8;
  int64_t max_entries = 1000;

 private:
  struct Entry {
    std::vector<Segment> tokens;
    int64_t num_tokens = 0;
    int64_t bytes = 0;
  };
  // A message-boundary snapshot of a running request, stored once the
  // machine has computed that far (the prefill is split there).
  struct Boundary {
    const Request* request = nullptr;
    int64_t tokens = 0;
  };
  using Lru = std::list<Entry>;  // front = least recently used
  void StoreBoundaries(const Progress* progress);
  void Store(std::vector<Segment> tokens);
  Lru::iterator Find(std::span<const Segment> tokens, int64_t num_tokens);
  void Evict(Lru::iterator it);

  Lru entries_;
  std::unordered_map<int64_t, Boundary> boundaries_;  // by request index
  std::unordered_set<int64_t> internal_;  // requests split at m - 1 (no prompt-end store)
  int64_t bytes_ = 0;
};

}  // namespace lineage::sim
