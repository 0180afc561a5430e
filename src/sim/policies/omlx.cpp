#include "sim/policies/omlx.h"

#include <algorithm>

namespace lineage::sim {

OmlxPolicy::OmlxPolicy(const ModelShape& shape, const PolicyOptions& options)
    : PeerPolicy(shape, options),
      block_tokens_(shape.attention_only() ? 256 : 2048),
      // A hybrid block carries its boundary snapshot (the state at its end).
      block_bytes_(block_tokens_ * shape.kv_bytes_per_token + shape.recurrent_bytes) {}

void OmlxPolicy::ToRam(uint64_t hash, Block& b) {
  if (b.in_ram) ram_lru_.erase(b.ram_pos);
  else counters_.ram_bytes += block_bytes_;
  ram_lru_.push_front(hash);
  b.ram_pos = ram_lru_.begin();
  b.in_ram = true;
}

void OmlxPolicy::ToDisk(uint64_t hash, Block& b) {
  if (options_.disk_budget_bytes <= 0) return;
  if (b.on_disk) {
    disk_lru_.erase(b.disk_pos);
  } else {
    counters_.disk_bytes += block_bytes_;
    counters_.disk_written_bytes += block_bytes_;
  }
  disk_lru_.push_front(hash);
  b.disk_pos = disk_lru_.begin();
  b.on_disk = true;
}

Admission OmlxPolicy::Admit(const RequestView& r, int64_t) {
  const Request& q = *r.request;
  std::vector<uint64_t> hashes = ChainedBlockHashes(q.prompt, block_tokens_, q.num_prompt_tokens - 1);
  // Every block ends at a snapshot: the restore is the whole matched chain.
  size_t usable = 0;
  while (usable < hashes.size() && blocks_.count(hashes[usable])) ++usable;
  Admission a;
  for (size_t i = 0; i < usable; ++i) {
    Block& b = blocks_[hashes[i]];
    if (!b.in_ram) a.disk_read_bytes += block_bytes_;
    ToRam(hashes[i], b);  // read blocks are promoted to the hot tier
    if (b.on_disk) ToDisk(hashes[i], b);
  }
  a.restore_tokens = static_cast<int64_t>(usable) * block_tokens_;
  // Blocks are concatenated into one cache for the sequence: a copy of the KV.
  if (a.restore_tokens > 0) a.ram_copy_bytes = shape_.SnapshotBytes(a.restore_tokens);
  counters_.disk_read_bytes += a.disk_read_bytes;
  Enforce();
  return a;
}

void OmlxPolicy::Finish(const RequestView& r, int64_t) {
  std::vector<Segment> seq = PromptAndOutput(*r.request);
  std::vector<uint64_t> hashes = ChainedBlockHashes(seq, block_tokens_, NumTokens(seq));
  // A block is written to the SSD tier once; a later sequence sharing it only
  // refreshes its place in both LRU lists.
  for (uint64_t h : hashes) {
    Block& b = blocks_[h];
    ToRam(h, b);
    ToDisk(h, b);
  }
  Enforce();
}

void OmlxPolicy::Enforce() {
  while (counters_.ram_bytes > options_.ram_budget_bytes && !ram_lru_.empty()) {
    uint64_t h = ram_lru_.back();
    ram_lru_.pop_back();
    Block& b = blocks_[h];
    b.in_ram = false;
    counters_.ram_bytes -= block_bytes_;
    ++counters_.evictions;
    if (!b.on_disk) blocks_.erase(h);
  }
  while (counters_.disk_bytes > options_.disk_budget_bytes && !disk_lru_.empty()) {
    uint64_t h = disk_lru_.back();
    disk_lru_.pop_back();
    Block& b = blocks_[h];
    b.on_disk = false;
    counters_.disk_bytes -= block_bytes_;
    ++counters_.evictions;
    if (!b.in_ram) blocks_.erase(h);
  }
  counters_.ram_peak_bytes = std::max(counters_.ram_peak_bytes, counters_.ram_bytes);
}

}  // namespace lineage::sim
