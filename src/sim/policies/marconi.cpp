#include "sim/policies/marconi.h"

#include <algorithm>

namespace lineage::sim {

MarconiPolicy::MarconiPolicy(const ModelShape& shape, const PolicyOptions& options)
    : shape_(shape), options_(options) {}

MarconiPolicy::NodeInfo& MarconiPolicy::Info(SegTrie::NodeId id) {
  if (static_cast<size_t>(id) >= info_.size()) info_.resize(static_cast<size_t>(id) + 1);
  return info_[static_cast<size_t>(id)];
}

Admission MarconiPolicy::Admit(const RequestView& r, int64_t now_ms) {
  const Request& q = *r.request;
  SegTrie::Match match = trie_.Longest(q.prompt);
  const int64_t cap = std::min(match.tokens, q.num_prompt_tokens - 1);
  Admission a;
  if (shape_.attention_only()) {
    a.restore_tokens = cap;
  } else {
    for (SegTrie::NodeId n = match.node; n != SegTrie::kRoot; n = trie_.node(n).parent) {
      if (Info(n).state && trie_.node(n).end_tokens <= cap) {
        a.restore_tokens = trie_.node(n).end_tokens;
        Info(n).last_used_ms = now_ms;
        break;
      }
    }
    a.ram_copy_bytes = a.restore_tokens > 0 ? shape_.recurrent_bytes : 0;
  }
  // The branch point this prompt creates: where it leaves the tree.
  branch_of_[r.index] = match.tokens;
  return a;
}

void MarconiPolicy::Finish(const RequestView& r, int64_t now_ms) {
  std::vector<Segment> seq = PromptAndOutput(*r.request);
  int64_t branch = branch_of_[r.index];
  branch_of_.erase(r.index);
  SegTrie::NodeId leaf = trie_.Insert(seq);
  if (leaf == SegTrie::kRoot) return;
  if (!shape_.attention_only()) {
    // A state at the branch point (captured during prefill) and at the last token.
    for (SegTrie::NodeId n = leaf; n != SegTrie::kRoot; n = trie_.node(n).parent) {
      if (trie_.node(n).end_tokens == branch && trie_.node(n).children.size() >= 2 && !Info(n).state) {
        Info(n).state = true;
        Info(n).last_used_ms = now_ms;
        ++num_states_;
      }
      if (trie_.node(n).end_tokens < branch) break;
    }
    if (!Info(leaf).state) {
      Info(leaf).state = true;
      ++num_states_;
    }
  }
  ++Info(leaf).ends;
  Info(leaf).last_used_ms = now_ms;
  Enforce();
}

int64_t MarconiPolicy::Bytes() const {
  return trie_.live_tokens() * shape_.kv_bytes_per_token + num_states_ * shape_.recurrent_bytes;
}

// Candidates: a state on a leaf (evicting it frees the leaf's own path up to
// the nearest shared node) or on a node with one child (frees the state).
// Utility = recency_weight x recency + efficiency_weight x FLOPs saved per
// byte freed, both scaled to [0, 1] over the candidates; lowest goes first.
void MarconiPolicy::Enforce() {
  while (Bytes() > options_.ram_budget_bytes) {
    struct Cand {
      SegTrie::NodeId node;
      double recency, efficiency, score;
    };
    std::vector<Cand> cands;
    for (size_t i = 1; i < info_.size(); ++i) {
      SegTrie::NodeId id = static_cast<SegTrie::NodeId>(i);
      const NodeInfo& inf = info_[i];
      if (!inf.state && inf.ends == 0) continue;
      const SegTrie::Node& n = trie_.node(id);
      if (n.refs == 0 || n.children.size() > 1) continue;
      int64_t freed = inf.state ? shape_.recurrent_bytes : 0;
      if (n.children.empty()) {
        for (SegTrie::NodeId p = id; p != SegTrie::kRoot && trie_.node(p).refs == inf.ends; p = trie_.node(p).parent)
          freed += trie_.node(p).seg.num_tokens * shape_.kv_bytes_per_token;
      }
      if (freed <= 0) continue;
      double flops = static_cast<double>(n.end_tokens);
      cands.push_back({id, static_cast<double>(inf.last_used_ms), flops / static_cast<double>(freed), 0});
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
      SegTrie::NodeId id = cands[k].node;
      NodeInfo& inf = Info(id);
      if (trie_.node(id).refs == 0) continue;  // freed by an earlier eviction in this batch
      if (inf.state) {
        inf.state = false;
        --num_states_;
      }
      if (trie_.node(id).children.empty()) {
        // Every node only these sequences hold goes, states included.
        int32_t ends = inf.ends;
        for (SegTrie::NodeId p = id; p != SegTrie::kRoot && trie_.node(p).refs == ends; p = trie_.node(p).parent) {
          NodeInfo& pi = Info(p);
          if (pi.state) --num_states_;
          pi = NodeInfo{};
        }
        for (int32_t e = 0; e < ends; ++e) trie_.Release(id);
      }
      ++counters_.evictions;
    }
  }
  ChargeRam(counters_, Bytes() - counters_.ram_bytes);
}

}  // namespace lineage::sim
