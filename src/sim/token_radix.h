// TokenRadix: a radix tree over token ids, one edge per run of tokens, split
// wherever two sequences part (at any token, inside a segment or not): the
// simulator's one tree (the oracle, SGLang and Marconi). The
// tree SGLang's MambaRadixCache and Marconi keep: a node ends at a token
// position where a recurrent state may be held, and live_tokens() is the
// number of distinct KV rows the tree holds.
//
// The tree holds no payload: a policy keeps its own per-node data in a vector
// indexed by NodeId (sized by capacity()). A split keeps the lower part's id
// (its payload stays where it was) and gives the new upper part a fresh id;
// RemoveLeaf frees an id for reuse, so the policy resets its data there.
//
// Node ids are stable until the node is removed. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/trace.h"

namespace lineage::sim {

class TokenRadix {
 public:
  using NodeId = int32_t;
  static constexpr NodeId kRoot = 0;
  static constexpr NodeId kNone = -1;

  struct Node {
    std::vector<uint32_t> key;      // the edge's tokens from the parent
    NodeId parent = kNone;
    int64_t end_tokens = 0;         // tokens from the root to the end of this node
    std::vector<NodeId> children;
    int32_t refs = 0;               // sequences held that end here (Hold / Release)
  };

  TokenRadix();

  struct Match {
    int64_t tokens = 0;             // tokens of the query found in the tree
    NodeId node = kRoot;            // deepest node ending at or before `tokens`
    std::vector<NodeId> path;       // nodes matched whole, root excluded, top down
  };
  // The longest prefix of `tokens` in the tree. With `split`, an edge matched
  // part way is split so that a node ends exactly at `tokens` of the match.
  Match Walk(std::span<const uint32_t> tokens, bool split);

  // Adds `tokens` as a path (splitting and creating nodes); returns the node
  // ending exactly at tokens.size() (kRoot when empty).
  NodeId Insert(std::span<const uint32_t> tokens);

  // REQUIRES: `id` is a leaf other than the root. Its tokens leave the tree.
  void RemoveLeaf(NodeId id);

  // Reference-counted sequences, for a policy that holds whole sequences
  // rather than per-node payloads: Hold inserts `tokens` and counts one more
  // holder of the node ending there; Release counts one less and removes
  // every node that no held sequence passes through any more. A split keeps
  // the count with the lower part, which keeps the id.
  NodeId Hold(std::span<const uint32_t> tokens);
  void Release(NodeId id);
  // The longest prefix of `tokens` in the tree, in tokens (no split).
  int64_t Longest(std::span<const uint32_t> tokens);

  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  bool is_leaf(NodeId id) const { return node(id).children.empty(); }
  size_t capacity() const { return nodes_.size(); }
  int64_t live_tokens() const { return live_tokens_; }

 private:
  NodeId ChildStartingWith(NodeId parent, uint32_t token) const;
  NodeId NewNode(NodeId parent, std::span<const uint32_t> key);
  // Splits `id` after `keep` tokens of its key; returns the new upper node.
  NodeId Split(NodeId id, size_t keep);

  std::vector<Node> nodes_;
  std::vector<NodeId> free_;
  int64_t live_tokens_ = 0;
};

// The token ids of a segment list.
std::vector<uint32_t> SequenceTokens(std::span<const Segment> seq);
// The token ids a lookup for `q` walks: its prompt but the last token (at
// least one token is computed to produce logits).
std::vector<uint32_t> LookupTokens(const Request& q);

}  // namespace lineage::sim
