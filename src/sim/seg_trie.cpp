#include "sim/seg_trie.h"

#include <algorithm>
#include <cassert>

namespace lineage::sim {

SegTrie::SegTrie() { nodes_.emplace_back(); }

SegTrie::NodeId SegTrie::FindChild(NodeId parent, const Segment& seg) const {
  for (NodeId c : nodes_[static_cast<size_t>(parent)].children) {
    const Segment& s = nodes_[static_cast<size_t>(c)].seg;
    if (s.id == seg.id && s.num_tokens == seg.num_tokens) return c;
  }
  return kNone;
}

SegTrie::Match SegTrie::Longest(std::span<const Segment> seq) const {
  Match m;
  for (const Segment& s : seq) {
    NodeId c = FindChild(m.node, s);
    if (c != kNone) {
      m.node = c;
      m.tokens += s.num_tokens;
      continue;
    }
    uint32_t partial = 0;
    for (NodeId other : nodes_[static_cast<size_t>(m.node)].children) {
      const Segment& o = nodes_[static_cast<size_t>(other)].seg;
      if (o.id == s.id) partial = std::max(partial, std::min(o.num_tokens, s.num_tokens));
    }
    m.tokens += partial;
    break;
  }
  return m;
}

SegTrie::NodeId SegTrie::NewNode(NodeId parent, const Segment& seg) {
  NodeId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    nodes_[static_cast<size_t>(id)] = Node{};
  } else {
    id = static_cast<NodeId>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[static_cast<size_t>(id)];
  n.seg = seg;
  n.parent = parent;
  n.end_tokens = nodes_[static_cast<size_t>(parent)].end_tokens + seg.num_tokens;
  nodes_[static_cast<size_t>(parent)].children.push_back(id);
  live_tokens_ += seg.num_tokens;
  ++live_nodes_;
  return id;
}

SegTrie::NodeId SegTrie::Insert(std::span<const Segment> seq) {
  NodeId at = kRoot;
  for (const Segment& s : seq) {
    NodeId c = FindChild(at, s);
    if (c == kNone) c = NewNode(at, s);
    ++nodes_[static_cast<size_t>(c)].refs;
    at = c;
  }
  return at;
}

void SegTrie::Release(NodeId node) {
  while (node != kRoot && node != kNone) {
    Node& n = nodes_[static_cast<size_t>(node)];
    assert(n.refs > 0);
    NodeId parent = n.parent;
    if (--n.refs == 0) {
      assert(n.children.empty());
      auto& siblings = nodes_[static_cast<size_t>(parent)].children;
      siblings.erase(std::find(siblings.begin(), siblings.end(), node));
      live_tokens_ -= n.seg.num_tokens;
      --live_nodes_;
      n.children.clear();
      n.children.shrink_to_fit();
      free_.push_back(node);
    }
    node = parent;
  }
}

}  // namespace lineage::sim
