#include "cache/prefix_tree.h"

#include <algorithm>
#include <cassert>

namespace lineage::cache {

struct PrefixTree::Node {
  Tokens edge;        // tokens on the edge from the parent into this node
  int64_t start = 0;  // depth before the edge
  int64_t end() const { return start + static_cast<int64_t>(edge.size()); }
  std::map<TokenId, std::unique_ptr<Node>> children;  // keyed by first edge token
  std::vector<TreePoint> points;   // start < n <= end()
  std::vector<EntryId> terminals;  // entries whose sequence ends at end()
  bool empty() const { return points.empty() && terminals.empty(); }
};

namespace {

int64_t CommonPrefix(const TokenId* a, const TokenId* b, int64_t n) {
  return std::mismatch(a, a + n, b).first - a;
}

}  // namespace

PrefixTree::PrefixTree() : root_(std::make_unique<Node>()) {}
PrefixTree::~PrefixTree() = default;

void PrefixTree::Split(Node* node, int64_t keep_tokens) {
  assert(keep_tokens > 0 && keep_tokens < static_cast<int64_t>(node->edge.size()));
  auto lower = std::make_unique<Node>();
  lower->edge.assign(node->edge.begin() + keep_tokens, node->edge.end());
  lower->start = node->start + keep_tokens;
  lower->children = std::move(node->children);
  lower->terminals = std::move(node->terminals);
  const int64_t cut = lower->start;
  std::vector<TreePoint> upper_points;
  for (const TreePoint& p : node->points) (p.n > cut ? lower->points : upper_points).push_back(p);
  node->points = std::move(upper_points);
  node->edge.resize(keep_tokens);
  node->children.clear();
  node->terminals.clear();
  const TokenId first = lower->edge[0];
  node->children.emplace(first, std::move(lower));
  ++num_nodes_;
}

void PrefixTree::Insert(TokenSpan tokens, EntryId id) {
  assert(!tokens.empty());
  const int64_t m = static_cast<int64_t>(tokens.size());
  Node* node = root_.get();
  int64_t depth = 0;
  while (depth < m) {
    auto it = node->children.find(tokens[depth]);
    if (it == node->children.end()) {
      auto leaf = std::make_unique<Node>();
      leaf->edge.assign(tokens.begin() + depth, tokens.end());
      leaf->start = depth;
      Node* raw = leaf.get();
      node->children.emplace(tokens[depth], std::move(leaf));
      ++num_nodes_;
      node = raw;
      depth = m;
      break;
    }
    Node* child = it->second.get();
    const int64_t len = static_cast<int64_t>(child->edge.size());
    const int64_t k = CommonPrefix(child->edge.data(), tokens.data() + depth, std::min(len, m - depth));
    if (k < len) Split(child, k);
    node = child;
    depth += k;
  }
  node->terminals.push_back(id);
  node->points.push_back({id, m, PointKind::kEntryEnd});
}

PrefixTree::Node* PrefixTree::Locate(TokenSpan tokens, int64_t n) const {
  Node* node = root_.get();
  while (true) {
    if (node != root_.get() && n <= node->end()) return node;
    const int64_t depth = node->end();
    if (depth >= static_cast<int64_t>(tokens.size())) return nullptr;
    auto it = node->children.find(tokens[depth]);
    if (it == node->children.end()) return nullptr;
    node = it->second.get();
  }
}

void PrefixTree::AddPoint(TokenSpan tokens, EntryId id, int64_t n, PointKind kind) {
  assert(n >= 1 && n <= static_cast<int64_t>(tokens.size()));
  Node* node = Locate(tokens, n);
  assert(node != nullptr && "entry not inserted");
  if (node) node->points.push_back({id, n, kind});
}

void PrefixTree::RemovePoint(TokenSpan tokens, EntryId id, int64_t n) {
  Node* node = Locate(tokens, n);
  if (!node) return;
  auto& pts = node->points;
  pts.erase(std::remove_if(pts.begin(), pts.end(),
                           [&](const TreePoint& p) {
                             return p.entry == id && p.n == n && p.kind != PointKind::kEntryEnd;
                           }),
            pts.end());
}

void PrefixTree::Remove(TokenSpan tokens, EntryId id) {
  const int64_t m = static_cast<int64_t>(tokens.size());
  std::vector<Node*> path{root_.get()};
  Node* node = root_.get();
  while (node->end() < m) {
    auto it = node->children.find(tokens[node->end()]);
    if (it == node->children.end()) break;
    node = it->second.get();
    path.push_back(node);
  }
  for (Node* n : path) {
    auto& pts = n->points;
    pts.erase(std::remove_if(pts.begin(), pts.end(), [&](const TreePoint& p) { return p.entry == id; }),
              pts.end());
  }
  auto& terms = path.back()->terminals;
  auto it = std::find(terms.begin(), terms.end(), id);
  if (it != terms.end()) terms.erase(it);
  Prune(path);
}

void PrefixTree::Prune(std::vector<Node*>& path) {
  for (size_t i = path.size() - 1; i >= 1; --i) {
    Node* node = path[i];
    Node* parent = path[i - 1];
    if (!node->empty()) continue;
    if (node->children.empty()) {
      parent->children.erase(node->edge[0]);
      --num_nodes_;
    } else if (node->children.size() == 1) {
      std::unique_ptr<Node> child = std::move(node->children.begin()->second);
      node->children.clear();
      node->edge.insert(node->edge.end(), child->edge.begin(), child->edge.end());
      node->points = std::move(child->points);
      node->terminals = std::move(child->terminals);
      node->children = std::move(child->children);
      --num_nodes_;
    }
  }
}

int64_t PrefixTree::Walk(TokenSpan prompt, int64_t max_n,
                         const std::function<void(const TreePoint&)>& visit) const {
  const int64_t m = static_cast<int64_t>(prompt.size());
  const Node* node = root_.get();
  int64_t depth = 0;
  while (depth < m) {
    auto it = node->children.find(prompt[depth]);
    if (it == node->children.end()) break;
    const Node* child = it->second.get();
    const int64_t len = static_cast<int64_t>(child->edge.size());
    const int64_t k = CommonPrefix(child->edge.data(), prompt.data() + depth, std::min(len, m - depth));
    const int64_t reach = depth + k;
    for (const TreePoint& p : child->points) {
      if (p.n <= reach && p.n <= max_n) visit(p);
    }
    depth = reach;
    if (k < len) break;
    node = child;
  }
  return depth;
}

void PrefixTree::EntriesSharing(TokenSpan prompt, int64_t shared_tokens,
                                const std::function<bool(EntryId)>& visit) const {
  if (shared_tokens <= 0) return;
  const Node* node = root_.get();
  while (node->end() < shared_tokens) {
    auto it = node->children.find(prompt[node->end()]);
    if (it == node->children.end()) return;
    node = it->second.get();
  }
  std::vector<const Node*> stack{node};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (EntryId id : n->terminals) {
      if (!visit(id)) return;
    }
    for (const auto& [tok, child] : n->children) stack.push_back(child.get());
  }
}

}  // namespace lineage::cache
