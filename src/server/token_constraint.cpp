#include "server/token_constraint.h"

#include <bit>
#include <limits>

namespace lineage::server {

TokenConstraint::TokenConstraint(std::shared_ptr<const ToolGrammar> grammar,
                                 std::shared_ptr<const TokenConstraintVocab> vocab)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)), matcher_(grammar_.get()) {
  mask_.assign((vocab_->vocab_size() + 63) / 64, 0);
}

void TokenConstraint::Walk(const TokenTrie& trie) {
  if (static_cast<int>(walk_.size()) < trie.max_depth + 1) walk_.resize(trie.max_depth + 1, matcher_);
  walk_[0].CopyFrom(matcher_);
  const size_t n = trie.nodes.size();
  for (size_t k = 0; k < n;) {
    const TokenTrie::Node& node = trie.nodes[k];
    ToolMatcher& m = walk_[node.depth];
    m.CopyFrom(walk_[node.depth - 1]);
    if (!m.Advance(node.byte)) {
      k = node.end;  // no token under this prefix can continue
      continue;
    }
    for (uint32_t t = node.tok_begin; t < node.tok_end; ++t) Allow(trie.tokens[t]);
    ++k;
  }
}

Status TokenConstraint::ComputeMask() {
  std::fill(mask_.begin(), mask_.end(), 0);
  if (matcher_.Accepting())
    for (int32_t id : vocab_->end_tokens()) Allow(id);
  if (!matcher_.Finished()) {
    TextState text = matcher_.text_state();
    if (text.kind == TextState::Kind::kNone) {
      Walk(vocab_->all());
    } else {
      const PlainText& p = text.kind == TextState::Kind::kJsonString ? vocab_->json_string() : vocab_->raw_text();
      if (!p.plain.empty() && text.room_bytes >= p.plain_bytes.back()) {
        for (size_t w = 0; w < mask_.size(); ++w) mask_[w] |= p.plain_bits[w];
      } else {
        for (size_t i = 0; i < p.plain.size() && p.plain_bytes[i] <= text.room_bytes; ++i) Allow(p.plain[i]);
      }
      Walk(p.special);
    }
  }
  for (uint64_t w : mask_)
    if (w) return Status::Ok();
  return Internal("no token can continue the constrained reply");
}

int64_t TokenConstraint::num_allowed() const {
  int64_t n = 0;
  for (uint64_t w : mask_) n += std::popcount(w);
  return n;
}

void TokenConstraint::Apply(std::span<const float> logits, std::vector<float>* out) const {
  out->resize(logits.size());
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) (*out)[i] = Allowed(static_cast<int32_t>(i)) ? logits[i] : kMasked;
}

Status TokenConstraint::Accept(int32_t id) {
  if (!Allowed(id)) return InvalidArgument("token " + std::to_string(id) + " is not allowed here");
  if (vocab_->is_end(id)) return Status::Ok();
  if (!matcher_.Advance(vocab_->bytes(id))) return Internal("an allowed token did not advance the grammar");
  return Status::Ok();
}

}  // namespace lineage::server
