// TokenConstraint: grammar-constrained sampling for one request. Before each
// token it computes which tokens can continue a reply in the grammar (their
// bytes advance the ToolMatcher, or they end the reply where it may end);
// the sampler then draws only among those, and the chosen token advances
// the state.
//
// The mask is found by walking the vocabulary trie from the current state,
// pruning a subtree at its first rejected byte, with the plain-text fast
// path of TokenConstraintVocab inside strings and text values. Cost is per
// token of output and independent of the batch; requests without a
// constraint never build one.
//
// Ownership: shares the grammar and the vocabulary (both immutable). Not
// thread-safe; used by the scheduler thread for one sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/status.h"
#include "server/tools/token_constraint_vocab.h"
#include "server/tools/tool_grammar.h"
#include "server/tools/tool_matcher.h"

namespace lineage::server {

class TokenConstraint {
 public:
  TokenConstraint(std::shared_ptr<const ToolGrammar> grammar, std::shared_ptr<const TokenConstraintVocab> vocab);

  // Computes the tokens allowed now. kInternal when none is (the grammar
  // has no dead ends, so that is a bug or a vocabulary without byte tokens).
  Status ComputeMask();
  bool Allowed(int32_t id) const {
    return id >= 0 && id < vocab_->vocab_size() && ((mask_[id / 64] >> (id % 64)) & 1);
  }
  // `out` = `logits` with every token not allowed at -infinity.
  // REQUIRES: ComputeMask() succeeded since the last Accept().
  void Apply(std::span<const float> logits, std::vector<float>* out) const;
  // Advances by the sampled token. kInvalidArgument when it was not allowed.
  Status Accept(int32_t id);

  const ToolMatcher& matcher() const { return matcher_; }
  int64_t num_allowed() const;

 private:
  void Allow(int32_t id) { mask_[id / 64] |= uint64_t{1} << (id % 64); }
  void Disallow(int32_t id) { mask_[id / 64] &= ~(uint64_t{1} << (id % 64)); }
  // Walks nodes [begin, end) of `trie`, a run of whole subtrees.
  void Walk(const TokenTrie& trie, size_t begin, size_t end);
  void Walk(const TokenTrie& trie) { Walk(trie, 0, trie.nodes.size()); }
  // The plain tokens, accepted wholesale, but those starting with a byte
  // that may continue a word under way, which are walked.
  // REQUIRES: the special tokens are walked after.
  void AllowPlain(const PlainText& p, const TextState& text);

  std::shared_ptr<const ToolGrammar> grammar_;
  std::shared_ptr<const TokenConstraintVocab> vocab_;
  ToolMatcher matcher_;
  std::vector<uint64_t> mask_;     // bit per token id
  std::vector<ToolMatcher> walk_;  // walk_[d]: the state after d bytes of the current trie path
};

}  // namespace lineage::server
