// SegTrie: a trie over segment lists, one node per segment, with reference
// counts. Shared prefixes are stored once, so live_tokens() is the number of
// distinct KV rows a set of sequences needs (the oracle's and marconi's
// radix tree, and the periodic policy's shared-KV accounting).
//
// Matching follows whole segments; where a segment of the query has the id
// of a child but another length, the shorter is a prefix of the longer and
// matching stops after it. Segments with different ids are taken to differ
// at their first token (docs/traces.md: a 2^-31 collision is ignored here).
//
// Node ids are stable until the node is freed. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/trace.h"

namespace lineage::sim {

class SegTrie {
 public:
  using NodeId = int32_t;
  static constexpr NodeId kRoot = 0;
  static constexpr NodeId kNone = -1;

  struct Node {
    Segment seg;
    NodeId parent = kNone;
    int64_t end_tokens = 0;  // tokens from the root to the end of this node
    int32_t refs = 0;        // sequences passing through (root: unused)
    std::vector<NodeId> children;
  };

  SegTrie();

  struct Match {
    int64_t tokens = 0;      // matched tokens
    NodeId node = kRoot;     // deepest node matched whole
  };
  Match Longest(std::span<const Segment> seq) const;

  // Adds one reference along the path of `seq`, creating nodes; returns the
  // last node (kRoot for an empty seq).
  NodeId Insert(std::span<const Segment> seq);
  // Removes one reference from `node` and its ancestors; frees nodes at zero.
  void Release(NodeId node);

  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  int64_t live_tokens() const { return live_tokens_; }
  int64_t live_nodes() const { return live_nodes_; }

 private:
  NodeId FindChild(NodeId parent, const Segment& seg) const;
  NodeId NewNode(NodeId parent, const Segment& seg);

  std::vector<Node> nodes_;
  std::vector<NodeId> free_;
  int64_t live_tokens_ = 0;
  int64_t live_nodes_ = 0;
};

}  // namespace lineage::sim
