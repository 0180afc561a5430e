#include "sim/policies/vllm.h"

#include <algorithm>
#include <cmath>

namespace lineage::sim {

int64_t VllmBlockTokens(const ModelShape& shape) {
  constexpr int64_t kAlignTokens = 16;  // the attention kernels' block alignment
  if (shape.attention_only() || shape.attention_layers <= 0 || shape.recurrent_layers <= 0) return kAlignTokens;
  const double attn_page_per_token = static_cast<double>(shape.kv_bytes_per_token) / shape.attention_layers;
  const double state_page = static_cast<double>(shape.recurrent_bytes) / shape.recurrent_layers;
  return kAlignTokens * static_cast<int64_t>(std::ceil(state_page / (kAlignTokens * attn_page_per_token)));
}

VllmPolicy::VllmPolicy(const ModelShape& shape, const PolicyOptions& options)
    : PeerPolicy(shape, options), block_tokens_(VllmBlockTokens(shape)) {
  // A hybrid block carries the KV of its tokens and the recurrent state at its end.
  block_bytes_ = block_tokens_ * shape.kv_bytes_per_token + shape.recurrent_bytes;
}

void VllmPolicy::Touch(const std::vector<uint64_t>& hashes, size_t count) {
  for (size_t i = count; i-- > 0;) {
    auto it = blocks_.find(hashes[i]);
    if (it != blocks_.end()) lru_.splice(lru_.begin(), lru_, it->second);
  }
}

Admission VllmPolicy::Admit(const RequestView& r, int64_t) {
  const Request& q = *r.request;
  // Full blocks only, and at least one prompt token left to compute.
  std::vector<uint64_t> hashes = ChainedBlockHashes(q.prompt, block_tokens_, q.num_prompt_tokens - 1);
  size_t hit = 0;
  while (hit < hashes.size() && blocks_.count(hashes[hit])) ++hit;
  Touch(hashes, hit);
  Admission a;
  // Cached blocks join the request's block table in place: nothing is copied.
  a.restore_tokens = static_cast<int64_t>(hit) * block_tokens_;
  return a;
}

void VllmPolicy::CacheBlocks(std::span<const Segment> seq) {
  std::vector<uint64_t> hashes = ChainedBlockHashes(seq, block_tokens_, NumTokens(seq));
  for (uint64_t h : hashes) {
    if (blocks_.count(h)) continue;
    lru_.push_front(h);
    blocks_[h] = lru_.begin();
  }
  Touch(hashes, hashes.size());
  Enforce();
}

// The prompt's full blocks are cached as they are computed; modelled at the
// end of the prefill.
void VllmPolicy::Commit(const RequestView& r, int64_t) { CacheBlocks(r.request->prompt); }

void VllmPolicy::Finish(const RequestView& r, int64_t) { CacheBlocks(PromptAndOutput(*r.request)); }

// The budget holds after every call: blocks leave before the peak is taken.
void VllmPolicy::Enforce() {
  int64_t bytes = static_cast<int64_t>(blocks_.size()) * block_bytes_;
  while (bytes > options_.ram_budget_bytes && !lru_.empty()) {
    blocks_.erase(lru_.back());
    lru_.pop_back();
    bytes -= block_bytes_;
    ++counters_.evictions;
  }
  ChargeRam(counters_, bytes - counters_.ram_bytes);
}

}  // namespace lineage::sim
