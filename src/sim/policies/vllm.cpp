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
    : PeerPolicy(shape, options), block_tokens_(VllmBlockTokens(shape)) {}

void VllmPolicy::Touch(const std::vector<uint64_t>& hashes, size_t count) {
  for (size_t i = count; i-- > 0;) {
    auto it = blocks_.find(hashes[i]);
    if (it != blocks_.end()) lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
}

bool VllmPolicy::PrefillState(const Running& run, int64_t end) const {
  if (shape_.attention_only()) return true;
  const int64_t m = run.request->num_prompt_tokens;
  const int64_t chunk = std::max<int64_t>(1, max_num_batched_tokens / block_tokens_) * block_tokens_;
  return end == m / block_tokens_ * block_tokens_ || (end > run.restore && (end - run.restore) % chunk == 0);
}

template <typename Stated>
void VllmPolicy::CacheBlocks(std::span<const Segment> seq, int64_t to, Stated stated) {
  std::vector<uint64_t> hashes = ChainedBlockHashes(seq, block_tokens_, to);
  for (size_t i = 0; i < hashes.size(); ++i) {
    auto it = blocks_.find(hashes[i]);
    if (it == blocks_.end()) {
      lru_.push_front(hashes[i]);
      it = blocks_.emplace(hashes[i], Block{lru_.begin(), false}).first;
    }
    if (!it->second.state && stated(static_cast<int64_t>(i + 1) * block_tokens_)) {
      it->second.state = true;
      ++stated_blocks_;
    }
  }
  Touch(hashes, hashes.size());
  Enforce();
}

void VllmPolicy::CatchUp(const Progress& progress) {
  for (auto& [index, run] : running_) {
    const int64_t m = run.request->num_prompt_tokens;
    const int64_t done = std::min(m, progress.ComputedTokens(index));
    if (done < 0 || done / block_tokens_ <= run.cached_tokens / block_tokens_) continue;
    CacheBlocks(run.request->prompt, done, [&](int64_t end) { return PrefillState(run, end); });
    run.cached_tokens = done;
  }
}

Admission VllmPolicy::Admit(const RequestView& r, int64_t) {
  if (r.progress) CatchUp(*r.progress);
  const Request& q = *r.request;
  // Full blocks only, and at least one prompt token left to compute.
  std::vector<uint64_t> hashes = ChainedBlockHashes(q.prompt, block_tokens_, q.num_prompt_tokens - 1);
  size_t chain = 0, hit = 0;
  for (; chain < hashes.size(); ++chain) {
    auto it = blocks_.find(hashes[chain]);
    if (it == blocks_.end()) break;
    if (it->second.state || shape_.attention_only()) hit = chain + 1;
  }
  Touch(hashes, hit);
  Admission a;
  // Cached blocks join the request's block table in place: nothing is copied.
  a.restore_tokens = static_cast<int64_t>(hit) * block_tokens_;
  running_[r.index] = {&q, a.restore_tokens, a.restore_tokens};
  return a;
}

void VllmPolicy::Commit(const RequestView& r, int64_t) {
  auto it = running_.find(r.index);
  if (it == running_.end()) return;
  const Running& run = it->second;
  CacheBlocks(r.request->prompt, r.request->num_prompt_tokens, [&](int64_t end) { return PrefillState(run, end); });
  it->second.cached_tokens = r.request->num_prompt_tokens;
}

// Decode ends a step on every block boundary it passes.
void VllmPolicy::Finish(const RequestView& r, int64_t) {
  auto it = running_.find(r.index);
  if (it == running_.end()) return;
  const Running run = it->second;
  running_.erase(it);
  const std::vector<Segment> seq = PromptAndOutput(*r.request);
  const int64_t m = r.request->num_prompt_tokens;
  CacheBlocks(seq, NumTokens(seq), [&](int64_t end) { return end > m || PrefillState(run, end); });
}

// The budget holds after every call: blocks leave before the peak is taken.
void VllmPolicy::Enforce() {
  const int64_t kv_block = block_tokens_ * shape_.kv_bytes_per_token;
  auto bytes = [&] { return static_cast<int64_t>(blocks_.size()) * kv_block + stated_blocks_ * shape_.recurrent_bytes; };
  while (bytes() > options_.ram_budget_bytes && !lru_.empty()) {
    auto it = blocks_.find(lru_.back());
    if (it->second.state) --stated_blocks_;
    blocks_.erase(it);
    lru_.pop_back();
    ++counters_.evictions;
  }
  ChargeRam(counters_, bytes() - counters_.ram_bytes);
}

}  // namespace lineage::sim
