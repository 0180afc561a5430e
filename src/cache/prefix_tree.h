// PrefixTree: a radix tree over token sequences that indexes restore points
// (DESIGN.md §3.1). Each stored entry is a path from the root; each restore
// point (an entry's end or one of its checkpoints) sits at its depth n on that
// path. Walking a prompt down the tree visits exactly the points whose first
// n tokens equal the prompt's, so a lookup costs O(prompt length + points on
// the path) instead of one longest-common-prefix scan per entry.
//
// Invariants: every edge is non-empty; an entry's path ends at a node
// boundary; a point at depth n lies on the edge covering depths
// (start, start + edge length]; no node but the root is empty of points,
// terminals and children, and none has a single child without points or
// terminals (removal merges such chains).
//
// Exactness: tokens are compared, never hashed, so a point is visited only if
// its tokens equal the prompt's. Ownership: the tree copies the tokens it
// needs. Thread-safety: none; the owner locks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "cache/cache_types.h"

namespace lineage::cache {

struct TreePoint {
  EntryId entry = kNoEntry;
  int64_t n = 0;
  PointKind kind = PointKind::kEntryEnd;
};

class PrefixTree {
 public:
  PrefixTree();
  ~PrefixTree();
  PrefixTree(const PrefixTree&) = delete;
  PrefixTree& operator=(const PrefixTree&) = delete;

  // Adds entry `id` with sequence `tokens` (non-empty) and its kEntryEnd point.
  void Insert(TokenSpan tokens, EntryId id);
  // Removes the entry and every point it owns. `tokens` must be the sequence
  // it was inserted with.
  void Remove(TokenSpan tokens, EntryId id);
  // A checkpoint of entry `id` at depth n (1 <= n <= tokens.size()).
  void AddPoint(TokenSpan tokens, EntryId id, int64_t n, PointKind kind);
  void RemovePoint(TokenSpan tokens, EntryId id, int64_t n);

  // Walks `prompt` down the tree, calling visit(point) for every point whose
  // first n tokens equal the prompt's, with n <= max_n. Returns how many
  // leading tokens the prompt shares with the closest stored sequence.
  int64_t Walk(TokenSpan prompt, int64_t max_n,
               const std::function<void(const TreePoint&)>& visit) const;

  // Calls visit(id) for every entry whose sequence shares at least
  // `shared_tokens` (as returned by Walk, > 0) leading tokens with `prompt`,
  // until visit returns false.
  void EntriesSharing(TokenSpan prompt, int64_t shared_tokens,
                      const std::function<bool(EntryId)>& visit) const;

  int64_t num_nodes() const { return num_nodes_; }

 private:
  struct Node;
  Node* Locate(TokenSpan tokens, int64_t n) const;  // node whose edge covers depth n
  void Split(Node* node, int64_t keep_tokens);
  void Prune(std::vector<Node*>& path);

  std::unique_ptr<Node> root_;
  int64_t num_nodes_ = 1;
};

}  // namespace lineage::cache
