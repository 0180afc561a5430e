#include "sim/policies/omlx.h"

#include <xxhash.h>

#include <algorithm>

namespace lineage::sim {

std::vector<uint64_t> ChainedBlockHashes(std::span<const Segment> seq, int64_t block_tokens, int64_t max_tokens) {
  std::vector<uint64_t> out;
  uint64_t parent = 0;
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, parent);
  int64_t in_block = 0, at = 0;
  for (const Segment& s : seq) {
    uint32_t offset = 0;
    while (offset < s.num_tokens) {
      int64_t take = std::min<int64_t>(s.num_tokens - offset, block_tokens - in_block);
      // A block's tokens are named by the segment pieces covering it.
      uint64_t piece[3] = {s.id, offset, static_cast<uint64_t>(take)};
      XXH64_update(st, piece, sizeof piece);
      offset += static_cast<uint32_t>(take);
      in_block += take;
      at += take;
      if (in_block == block_tokens) {
        if (at > max_tokens) break;
        parent = XXH64_digest(st);
        out.push_back(parent);
        XXH64_reset(st, parent);
        in_block = 0;
      }
    }
    if (at > max_tokens) break;
  }
  XXH64_freeState(st);
  return out;
}

OmlxPolicy::OmlxPolicy(const ModelShape& shape, const PolicyOptions& options)
    : shape_(shape), options_(options), block_tokens_(shape.attention_only() ? 256 : 2048) {}

int64_t OmlxPolicy::BlockBytes(const Block& b) const {
  return block_tokens_ * shape_.kv_bytes_per_token + (b.snapshot ? shape_.recurrent_bytes : 0);
}

void OmlxPolicy::ToRam(uint64_t hash, Block& b) {
  if (b.in_ram) ram_lru_.erase(b.ram_pos);
  else counters_.ram_bytes += BlockBytes(b);
  ram_lru_.push_front(hash);
  b.ram_pos = ram_lru_.begin();
  b.in_ram = true;
}

void OmlxPolicy::ToDisk(uint64_t hash, Block& b) {
  if (options_.disk_budget_bytes <= 0) return;
  if (b.on_disk) {
    disk_lru_.erase(b.disk_pos);
  } else {
    counters_.disk_bytes += BlockBytes(b);
    counters_.disk_written_bytes += BlockBytes(b);
  }
  disk_lru_.push_front(hash);
  b.disk_pos = disk_lru_.begin();
  b.on_disk = true;
}

Admission OmlxPolicy::Admit(const RequestView& r, int64_t) {
  const Request& q = *r.request;
  std::vector<uint64_t> hashes = ChainedBlockHashes(q.prompt, block_tokens_, q.num_prompt_tokens - 1);
  size_t matched = 0, usable = 0;
  while (matched < hashes.size() && blocks_.count(hashes[matched])) {
    ++matched;
    if (shape_.attention_only() || blocks_[hashes[matched - 1]].snapshot) usable = matched;
  }
  Admission a;
  for (size_t i = 0; i < usable; ++i) {
    Block& b = blocks_[hashes[i]];
    if (!b.in_ram) a.disk_read_bytes += BlockBytes(b);
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
  for (size_t i = 0; i < hashes.size(); ++i) {
    auto [it, fresh] = blocks_.try_emplace(hashes[i]);
    Block& b = it->second;
    if (fresh) b.end_tokens = static_cast<int64_t>(i + 1) * block_tokens_;
    bool boundary = i + 1 == hashes.size() && !shape_.attention_only();
    if (boundary && !b.snapshot) {
      // The boundary snapshot joins its block in both tiers.
      if (b.in_ram) counters_.ram_bytes += shape_.recurrent_bytes;
      if (b.on_disk) {
        counters_.disk_bytes += shape_.recurrent_bytes;
        counters_.disk_written_bytes += shape_.recurrent_bytes;
      }
      b.snapshot = true;
    }
    ToRam(hashes[i], b);
    ToDisk(hashes[i], b);
  }
  Enforce();
}

void OmlxPolicy::Enforce() {
  while (counters_.ram_bytes > options_.ram_budget_bytes && !ram_lru_.empty()) {
    uint64_t h = ram_lru_.back();
    ram_lru_.pop_back();
    Block& b = blocks_[h];
    b.in_ram = false;
    counters_.ram_bytes -= BlockBytes(b);
    ++counters_.evictions;
    if (!b.on_disk) blocks_.erase(h);
  }
  while (counters_.disk_bytes > options_.disk_budget_bytes && !disk_lru_.empty()) {
    uint64_t h = disk_lru_.back();
    disk_lru_.pop_back();
    Block& b = blocks_[h];
    b.on_disk = false;
    counters_.disk_bytes -= BlockBytes(b);
    ++counters_.evictions;
    if (!b.in_ram) blocks_.erase(h);
  }
  counters_.ram_peak_bytes = std::max(counters_.ram_peak_bytes, counters_.ram_bytes);
}

}  // namespace lineage::sim
