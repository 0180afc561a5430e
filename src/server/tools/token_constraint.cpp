#include "server/tools/token_constraint.h"

#include <bit>
#include <limits>

namespace lineage::server {

TokenConstraint::TokenConstraint(std::shared_ptr<const ToolGrammar> grammar,
                                 std::shared_ptr<const TokenConstraintVocab> vocab)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)), matcher_(grammar_.get()) {
  mask_.assign((vocab_->vocab_size() + 63) / 64, 0);
  walk_.resize(vocab_->all().max_depth + 1, matcher_);  // every trie is a subset of all()
}

void TokenConstraint::Walk(const TokenTrie& trie, size_t begin, size_t end) {
  if (static_cast<int>(walk_.size()) < trie.max_depth + 1) walk_.resize(trie.max_depth + 1, matcher_);
  walk_[0].CopyFrom(matcher_);
  for (size_t k = begin; k < end;) {
    const TokenTrie::Node& node = trie.nodes[k];
    ToolMatcher& m = walk_[node.depth];
    m.CopyFrom(walk_[node.depth - 1]);
    if (!m.Advance(node.byte)) {
      k = node.end;  // no token under this prefix can continue
      continue;
    }
    if (node.plain_below && node.end > k + 1) {
      // Back in clean text with room for any token below: take the subtree whole.
      TextState text = m.text_state();
      uint8_t cls = text.kind == TextState::Kind::kJsonString ? TokenTrie::kJsonPlain
                    : text.kind == TextState::Kind::kRawText  ? TokenTrie::kRawPlain : 0;
      if ((node.plain_below & cls) && text.num_first_bytes == 0 && text.room_bytes >= node.max_suffix) {
        for (uint32_t t = node.tok_begin, e = trie.SubtreeTokenEnd(k); t < e; ++t) Allow(trie.tokens[t]);
        k = node.end;
        continue;
      }
    }
    for (uint32_t t = node.tok_begin; t < node.tok_end; ++t) Allow(trie.tokens[t]);
    ++k;
  }
}

void TokenConstraint::AllowPlain(const PlainText& p, const TextState& text) {
  if (!p.plain.empty() && text.room_bytes >= p.plain_bytes.back()) {
    for (size_t w = 0; w < mask_.size(); ++w) mask_[w] |= p.plain_bits[w];
  } else {
    for (size_t i = 0; i < p.plain.size() && p.plain_bytes[i] <= text.room_bytes; ++i) Allow(p.plain[i]);
  }
  // Tokens starting with such a byte are judged by walking their subtree of
  // the whole trie (special ones among them are walked again after: harmless).
  const TokenTrie& t = vocab_->all();
  for (int i = 0; i < text.num_first_bytes; ++i) {
    // The root's children: hop from subtree to subtree to the one of this byte.
    size_t k = 0;
    while (k < t.nodes.size() && t.nodes[k].byte != text.first_bytes[i]) k = t.nodes[k].end;
    if (k == t.nodes.size()) continue;
    for (uint32_t j = t.nodes[k].tok_begin, e = t.SubtreeTokenEnd(k); j < e; ++j) Disallow(t.tokens[j]);
    Walk(t, k, t.nodes[k].end);
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
      AllowPlain(p, text);
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
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  out->assign(logits.size(), kMasked);
  size_t n = std::min<size_t>(logits.size(), vocab_->vocab_size());
  for (size_t w = 0; w * 64 < n; ++w) {
    // Word by word: most words of a mask are all ones or all zeros.
    for (uint64_t bits = mask_[w]; bits; bits &= bits - 1) {
      size_t i = w * 64 + std::countr_zero(bits);
      if (i < n) (*out)[i] = logits[i];
    }
  }
}

Status TokenConstraint::Accept(int32_t id) {
  if (!Allowed(id)) return InvalidArgument("token " + std::to_string(id) + " is not allowed here");
  if (vocab_->is_end(id)) return Status::Ok();
  if (!matcher_.Advance(vocab_->bytes(id))) return Internal("an allowed token did not advance the grammar");
  return Status::Ok();
}

}  // namespace lineage::server
