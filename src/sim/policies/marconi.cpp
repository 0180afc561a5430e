#include "sim/policies/marconi.h"

#include <algorithm>

namespace lineage::sim {

MarconiPolicy::MarconiPolicy(const ModelShape& shape, const PolicyOptions& options)
    : PeerPolicy(shape, options) {}

MarconiPolicy::NodeInfo& MarconiPolicy::Info(TokenRadix::NodeId id) {
  if (info_.size() < tree_.capacity()) info_.resize(tree_.capacity());
  return info_[static_cast<size_t>(id)];
}

Admission MarconiPolicy::Admit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  const std::vector<uint32_t> tokens = LookupTokens(q);
  // Speculative insertion: the walk changes nothing in the tree.
  TokenRadix::Match match = tree_.Walk(tokens, false);
  Admission a;
  if (shape_.attention_only()) {
    a.restore_tokens = match.tokens;
  } else {
    for (auto it = match.path.rbegin(); it != match.path.rend(); ++it) {
      if (Info(*it).state) {
        a.restore_tokens = tree_.node(*it).end_tokens;
        Info(*it).last_used_ms = now_ms;
        break;
      }
    }
    a.ram_copy_bytes = a.restore_tokens > 0 ? shape_.recurrent_bytes : 0;
  }
  // Where this prompt leaves the tree: a branch point once it is inserted.
  branch_of_[r.index] = match.tokens;
  return a;
}

void MarconiPolicy::Finish(const RequestView& r, int64_t now_ms) {
  std::vector<uint32_t> tokens;
  ExpandTokens(PromptAndOutput(*r.request), tokens);
  const int64_t branch = branch_of_[r.index];
  branch_of_.erase(r.index);
  if (tokens.empty()) return;
  TokenRadix::NodeId leaf = tree_.Insert(tokens);
  if (!shape_.attention_only()) {
    // The state at the branch point was captured during prefill; it is kept
    // when the point really is one (two paths leave it).
    for (TokenRadix::NodeId n = tree_.node(leaf).parent; n != TokenRadix::kRoot; n = tree_.node(n).parent) {
      if (tree_.node(n).end_tokens < branch) break;
      if (tree_.node(n).end_tokens == branch && tree_.node(n).children.size() >= 2 && !Info(n).state) {
        Info(n).state = true;
        Info(n).last_used_ms = now_ms;
        ++num_states_;
      }
    }
  }
  if (!Info(leaf).state) {
    Info(leaf).state = true;  // the last decoded token (attention-only: marks a sequence end)
    if (!shape_.attention_only()) ++num_states_;
  }
  Info(leaf).last_used_ms = now_ms;
  Enforce();
}

int64_t MarconiPolicy::Bytes() const {
  return tree_.live_tokens() * shape_.kv_bytes_per_token + num_states_ * shape_.recurrent_bytes;
}

int64_t MarconiPolicy::FreedBytes(TokenRadix::NodeId id) {
  int64_t freed = shape_.attention_only() ? 0 : shape_.recurrent_bytes;
  if (!tree_.is_leaf(id)) return freed;
  // The leaf's edge and every stateless ancestor left with no other child.
  for (TokenRadix::NodeId p = id; p != TokenRadix::kRoot; p = tree_.node(p).parent) {
    if (p != id && (Info(p).state || tree_.node(p).children.size() > 1)) break;
    freed += static_cast<int64_t>(tree_.node(p).key.size()) * shape_.kv_bytes_per_token;
  }
  return freed;
}

void MarconiPolicy::Evict(TokenRadix::NodeId id) {
  if (Info(id).state && !shape_.attention_only()) --num_states_;
  Info(id) = NodeInfo{};
  // A leaf leaves with its unshared path; an inner node only loses its state.
  while (id != TokenRadix::kRoot && tree_.is_leaf(id) && !Info(id).state) {
    TokenRadix::NodeId parent = tree_.node(id).parent;
    Info(id) = NodeInfo{};
    tree_.RemoveLeaf(id);
    id = parent;
  }
}

// Candidates: a state on a leaf (evicting it frees the leaf's own path up to
// the nearest shared or stated node) or on a node with one child (frees the
// state). Utility = recency_weight x recency + efficiency_weight x FLOPs saved
// per byte freed, both scaled to [0, 1] over the candidates; lowest goes first.
void MarconiPolicy::Enforce() {
  while (Bytes() > options_.ram_budget_bytes) {
    struct Cand {
      TokenRadix::NodeId node;
      double recency, efficiency, score;
    };
    std::vector<Cand> cands;
    for (size_t i = 1; i < tree_.capacity(); ++i) {
      TokenRadix::NodeId id = static_cast<TokenRadix::NodeId>(i);
      if (!Info(id).state || tree_.node(id).children.size() > 1) continue;
      int64_t freed = FreedBytes(id);
      if (freed <= 0) continue;
      double flops = static_cast<double>(tree_.node(id).end_tokens);
      cands.push_back({id, static_cast<double>(Info(id).last_used_ms), flops / static_cast<double>(freed), 0});
    }
    if (cands.empty()) break;
    auto [rmin, rmax] = std::minmax_element(cands.begin(), cands.end(), [](auto& a, auto& b) { return a.recency < b.recency; });
    auto [emin, emax] = std::minmax_element(cands.begin(), cands.end(), [](auto& a, auto& b) { return a.efficiency < b.efficiency; });
    double r0 = rmin->recency, rs = std::max(1e-9, rmax->recency - r0);
    double e0 = emin->efficiency, es = std::max(1e-12, emax->efficiency - e0);
    for (Cand& c : cands)
      c.score = recency_weight * (c.recency - r0) / rs + efficiency_weight * (c.efficiency - e0) / es;
    std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.score < b.score; });
    // Evict in score order; a pass re-scores once the cheapest batch is gone.
    size_t batch = std::max<size_t>(1, cands.size() / 8);
    for (size_t k = 0; k < batch && Bytes() > options_.ram_budget_bytes; ++k) {
      TokenRadix::NodeId id = cands[k].node;
      if (!Info(id).state) continue;  // freed by an earlier eviction in this batch
      Evict(id);
      ++counters_.evictions;
    }
  }
  ChargeRam(counters_, Bytes() - counters_.ram_bytes);
}

}  // namespace lineage::sim
