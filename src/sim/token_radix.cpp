#include "sim/token_radix.h"

#include <algorithm>
#include <cassert>

namespace lineage::sim {

TokenRadix::TokenRadix() { nodes_.emplace_back(); }

TokenRadix::NodeId TokenRadix::ChildStartingWith(NodeId parent, uint32_t token) const {
  for (NodeId c : node(parent).children)
    if (node(c).key.front() == token) return c;
  return kNone;
}

TokenRadix::NodeId TokenRadix::NewNode(NodeId parent, std::span<const uint32_t> key) {
  NodeId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<NodeId>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[static_cast<size_t>(id)];
  n.key.assign(key.begin(), key.end());
  n.parent = parent;
  n.end_tokens = node(parent).end_tokens + static_cast<int64_t>(key.size());
  n.children.clear();
  n.refs = 0;
  nodes_[static_cast<size_t>(parent)].children.push_back(id);
  live_tokens_ += static_cast<int64_t>(key.size());
  return id;
}

TokenRadix::NodeId TokenRadix::Split(NodeId id, size_t keep) {
  assert(keep > 0 && keep < node(id).key.size());
  const NodeId parent = node(id).parent;
  // The upper part is a new node in the child's place; the child keeps its id.
  std::vector<uint32_t> upper(node(id).key.begin(), node(id).key.begin() + static_cast<std::ptrdiff_t>(keep));
  NodeId up = NewNode(parent, upper);
  live_tokens_ -= static_cast<int64_t>(keep);  // the tokens moved, they were not added
  auto& siblings = nodes_[static_cast<size_t>(parent)].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), id));
  Node& child = nodes_[static_cast<size_t>(id)];
  child.key.erase(child.key.begin(), child.key.begin() + static_cast<std::ptrdiff_t>(keep));
  child.parent = up;
  nodes_[static_cast<size_t>(up)].children.push_back(id);
  return up;
}

TokenRadix::Match TokenRadix::Walk(std::span<const uint32_t> tokens, bool split) {
  Match m;
  size_t at = 0;
  while (at < tokens.size()) {
    NodeId c = ChildStartingWith(m.node, tokens[at]);
    if (c == kNone) break;
    const std::vector<uint32_t>& key = node(c).key;
    const size_t n = std::min(key.size(), tokens.size() - at);
    const size_t same =
        static_cast<size_t>(std::mismatch(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(n), tokens.begin() + static_cast<std::ptrdiff_t>(at)).first -
                            key.begin());
    at += same;
    if (same < key.size()) {
      if (split) {
        m.node = Split(c, same);
        m.path.push_back(m.node);
      }
      break;
    }
    m.node = c;
    m.path.push_back(c);
  }
  m.tokens = static_cast<int64_t>(at);
  return m;
}

TokenRadix::NodeId TokenRadix::Insert(std::span<const uint32_t> tokens) {
  Match m = Walk(tokens, true);
  if (m.tokens == static_cast<int64_t>(tokens.size())) return m.node;
  return NewNode(m.node, tokens.subspan(static_cast<size_t>(m.tokens)));
}

void TokenRadix::RemoveLeaf(NodeId id) {
  assert(id != kRoot && is_leaf(id));
  Node& n = nodes_[static_cast<size_t>(id)];
  auto& siblings = nodes_[static_cast<size_t>(n.parent)].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), id));
  live_tokens_ -= static_cast<int64_t>(n.key.size());
  n.key.clear();
  n.key.shrink_to_fit();
  n.parent = kNone;
  free_.push_back(id);
}

TokenRadix::NodeId TokenRadix::Hold(std::span<const uint32_t> tokens) {
  const NodeId id = Insert(tokens);
  if (id != kRoot) ++nodes_[static_cast<size_t>(id)].refs;
  return id;
}

void TokenRadix::Release(NodeId id) {
  if (id == kRoot) return;
  assert(nodes_[static_cast<size_t>(id)].refs > 0);
  --nodes_[static_cast<size_t>(id)].refs;
  while (id != kRoot && is_leaf(id) && node(id).refs == 0) {
    const NodeId parent = node(id).parent;
    RemoveLeaf(id);
    id = parent;
  }
}

int64_t TokenRadix::Longest(std::span<const uint32_t> tokens) { return Walk(tokens, /*split=*/false).tokens; }

std::vector<uint32_t> SequenceTokens(std::span<const Segment> seq) {
  std::vector<uint32_t> tokens;
  ExpandTokens(seq, tokens);
  return tokens;
}

std::vector<uint32_t> LookupTokens(const Request& q) {
  std::vector<uint32_t> tokens = SequenceTokens(q.prompt);
  tokens.resize(static_cast<size_t>(std::max<int64_t>(0, q.num_prompt_tokens - 1)));
  return tokens;
}

}  // namespace lineage::sim
