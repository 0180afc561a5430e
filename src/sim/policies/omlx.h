// oMLX: a paged prefix cache of fixed-size token blocks named by chained
// hashes (a block's hash covers its parent's hash and its own tokens), a RAM
// ("hot") tier and an SSD tier, each LRU by block. Hybrid models get larger
// blocks (oMLX enlarges 256 to 2,048 tokens) and a recurrent "boundary
// snapshot" at every block boundary, stored with its block on both tiers; a
// restore takes the whole matched chain. Each block's bytes (KV + snapshot)
// are written to the SSD tier once, however many sequences share it.
// See docs/policies.md for what it models and what it leaves out.
#pragma once

#include <list>
#include <unordered_map>

#include "sim/block_hashes.h"
#include "sim/policy.h"

namespace lineage::sim {

class OmlxPolicy final : public PeerPolicy {
 public:
  OmlxPolicy(const ModelShape& shape, const PolicyOptions& options);
  std::string name() const override { return "omlx"; }
  Admission Admit(const RequestView& r, int64_t now_ms) override;
  void Commit(const RequestView&, int64_t) override {}
  void Finish(const RequestView& r, int64_t now_ms) override;
  bool has_disk_tier() const override { return options_.disk_budget_bytes > 0; }

  int64_t block_tokens() const { return block_tokens_; }

 private:
  struct Block {
    bool in_ram = false, on_disk = false;
    std::list<uint64_t>::iterator ram_pos, disk_pos;
  };
  void ToRam(uint64_t hash, Block& b);
  void ToDisk(uint64_t hash, Block& b);
  void Enforce();

  int64_t block_tokens_;
  int64_t block_bytes_;  // KV of the block's tokens + its boundary snapshot (hybrid)
  std::unordered_map<uint64_t, Block> blocks_;
  std::list<uint64_t> ram_lru_, disk_lru_;  // front = most recently used
};

}  // namespace lineage::sim
