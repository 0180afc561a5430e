// oMLX: a paged prefix cache of fixed-size token blocks named by chained
// hashes (a block's hash covers its parent's hash and its own tokens), a RAM
// ("hot") tier and an SSD tier, each LRU by block. Hybrid models get larger
// blocks (oMLX enlarges 256 to 2,048 tokens) and a recurrent "boundary
// snapshot" at the last full block of each stored sequence; a restore walks
// the chain and falls back to the deepest block holding a snapshot.
// See docs/policies.md for what it models and what it leaves out.
#pragma once

#include <list>
#include <unordered_map>

#include "sim/policy.h"

namespace lineage::sim {

class OmlxPolicy final : public Policy {
 public:
  OmlxPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "omlx"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView&, int64_t) override {}
  void Finish(const RequestView& r, int64_t now_ms) override;
  PolicyCounters counters() const override { return counters_; }
  bool has_disk_tier() const override { return options_.disk_budget_bytes > 0; }

  int64_t block_tokens() const { return block_tokens_; }

 private:
  struct Block {
    int64_t end_tokens = 0;
    bool snapshot = false;
    bool in_ram = false, on_disk = false;
    std::list<uint64_t>::iterator ram_pos, disk_pos;
  };
  int64_t BlockBytes(const Block& b) const;
  void ToRam(uint64_t hash, Block& b);
  void ToDisk(uint64_t hash, Block& b);
  void Enforce();

  ModelShape shape_;
  PolicyOptions options_;
  int64_t block_tokens_;
  std::unordered_map<uint64_t, Block> blocks_;
  std::list<uint64_t> ram_lru_, disk_lru_;  // front = most recently used
  PolicyCounters counters_;
};

// Chained hashes of the full `block_tokens` blocks of `seq` that end at or
// before `max_tokens`. Equal hashes mean equal token prefixes.
std::vector<uint64_t> ChainedBlockHashes(std::span<const Segment> seq, int64_t block_tokens, int64_t max_tokens);

}  // namespace lineage::sim
