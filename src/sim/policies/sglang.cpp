#include "sim/policies/sglang.h"

#include <algorithm>

namespace lineage::sim {

SglangPolicy::SglangPolicy(const ModelShape& shape, const PolicyOptions& options) : PeerPolicy(shape, options) {
  const double budget = static_cast<double>(options.ram_budget_bytes);
  if (shape.attention_only()) {
    kv_capacity_tokens_ = options.ram_budget_bytes / shape.kv_bytes_per_token;
  } else {
    const double state_share = kMambaFullMemoryRatio / (1.0 + kMambaFullMemoryRatio);
    state_capacity_ = static_cast<int64_t>(budget * state_share) / shape.recurrent_bytes;
    kv_capacity_tokens_ = static_cast<int64_t>(budget * (1.0 - state_share)) / shape.kv_bytes_per_token;
  }
}

SglangPolicy::NodeInfo& SglangPolicy::Info(TokenRadix::NodeId id) {
  if (info_.size() < tree_.capacity()) info_.resize(tree_.capacity());
  return info_[static_cast<size_t>(id)];
}

void SglangPolicy::SetStamp(TokenRadix::NodeId id, uint64_t stamp) {
  NodeInfo& inf = Info(id);
  full_lru_.erase({inf.stamp, id});
  if (inf.state) state_lru_.erase({inf.stamp, id});
  inf.stamp = stamp;
  full_lru_.insert({stamp, id});
  if (inf.state) state_lru_.insert({stamp, id});
}

void SglangPolicy::TouchPath(TokenRadix::NodeId id) {
  std::vector<TokenRadix::NodeId> path;
  for (; id != TokenRadix::kRoot; id = tree_.node(id).parent) path.push_back(id);
  for (auto it = path.rbegin(); it != path.rend(); ++it) SetStamp(*it, ++clock_);
}

void SglangPolicy::AddState(TokenRadix::NodeId id) {
  NodeInfo& inf = Info(id);
  if (inf.state || shape_.attention_only()) return;
  inf.state = true;
  state_lru_.insert({inf.stamp, id});
  ++num_states_;
}

void SglangPolicy::DropState(TokenRadix::NodeId id) {
  NodeInfo& inf = Info(id);
  if (!inf.state) return;
  state_lru_.erase({inf.stamp, id});
  inf.state = false;
  --num_states_;
}

void SglangPolicy::InsertPrefilled(Running& run, int64_t done) {
  const int64_t m = run.request->num_prompt_tokens;
  done = std::min(done, m);
  const bool chunk_due = run.next_chunk_end < m && run.next_chunk_end <= done;
  const bool branch_due = run.branch > 0 && run.branch <= done;
  if (shape_.attention_only() || (!chunk_due && !branch_due)) return;
  std::vector<uint32_t> tokens;
  ExpandTokens(run.request->prompt, tokens);
  for (; run.next_chunk_end < m && run.next_chunk_end <= done; run.next_chunk_end += chunked_prefill_tokens)
    InsertWithState(tokens, run.next_chunk_end);
  if (branch_due) {
    InsertWithState(tokens, run.branch);
    run.branch = 0;
  }
  Enforce();
}

Admission SglangPolicy::Admit(const RequestView& r, int64_t) {
  if (r.progress)
    for (auto& [index, run] : running_) InsertPrefilled(run, r.progress->ComputedTokens(index));
  const Request& q = *r.request;
  const std::vector<uint32_t> tokens = LookupTokens(q);
  TokenRadix::Match match = tree_.Walk(tokens, true);
  Admission a;
  TokenRadix::NodeId best = TokenRadix::kRoot;
  if (shape_.attention_only()) {
    best = match.node;
  } else {
    for (auto it = match.path.rbegin(); it != match.path.rend(); ++it)
      if (Info(*it).state) {
        best = *it;
        break;
      }
  }
  // The refresh also lists the stateless node a split may have added.
  if (match.node != TokenRadix::kRoot) TouchPath(match.node);
  a.restore_tokens = tree_.node(best).end_tokens;
  if (!shape_.attention_only() && a.restore_tokens > 0) a.ram_copy_bytes = shape_.recurrent_bytes;  // copy-on-write of the state
  // The KV match runs past the deepest state: the state at the branch point is kept.
  Running run{&q, a.restore_tokens + chunked_prefill_tokens, 0};
  const int64_t branch = match.tokens / kChunkTokens * kChunkTokens;
  if (!shape_.attention_only() && branch > a.restore_tokens) run.branch = branch;
  running_[r.index] = run;
  return a;
}

void SglangPolicy::InsertWithState(const std::vector<uint32_t>& tokens, int64_t len) {
  if (len <= 0) return;
  TokenRadix::NodeId n = tree_.Insert(std::span(tokens).first(static_cast<size_t>(len)));
  TouchPath(n);  // lists new nodes (a fresh leaf, the upper half of a split) too
  AddState(n);
}

void SglangPolicy::Commit(const RequestView& r, int64_t) {
  auto it = running_.find(r.index);
  if (it != running_.end()) InsertPrefilled(it->second, r.request->num_prompt_tokens);
}

void SglangPolicy::Finish(const RequestView& r, int64_t) {
  running_.erase(r.index);
  std::vector<uint32_t> tokens;
  ExpandTokens(PromptAndOutput(*r.request), tokens);
  InsertWithState(tokens, static_cast<int64_t>(tokens.size()));
  Enforce();
}

void SglangPolicy::EvictLeaf(TokenRadix::NodeId id) {
  while (id != TokenRadix::kRoot && tree_.is_leaf(id)) {
    TokenRadix::NodeId parent = tree_.node(id).parent;
    DropState(id);
    full_lru_.erase({Info(id).stamp, id});
    Info(id) = NodeInfo{};
    tree_.RemoveLeaf(id);
    id = parent;
    // Stateless leaves above are tombstones on a hybrid model (no restore can
    // end there); on an attention-only model they are KV like any other.
    if (shape_.attention_only() || Info(id).state) break;
  }
}

void SglangPolicy::Enforce() {
  while (num_states_ > state_capacity_ && !state_lru_.empty()) {
    TokenRadix::NodeId id = state_lru_.begin()->second;
    if (tree_.is_leaf(id)) EvictLeaf(id);
    else DropState(id);  // tombstone
    ++counters_.evictions;
  }
  while (tree_.live_tokens() > kv_capacity_tokens_ && !full_lru_.empty()) {
    TokenRadix::NodeId leaf = TokenRadix::kNone;
    for (const auto& [stamp, id] : full_lru_)
      if (tree_.is_leaf(id)) {
        leaf = id;
        break;
      }
    if (leaf == TokenRadix::kNone) break;
    EvictLeaf(leaf);
    ++counters_.evictions;
  }
  ChargeRam(counters_, tree_.live_tokens() * shape_.kv_bytes_per_token + num_states_ * shape_.recurrent_bytes -
                           counters_.ram_bytes);
}

}  // namespace lineage::sim
