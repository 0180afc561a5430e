// TokenConstraintVocab: a model's vocabulary arranged for grammar masking,
// built once per model and shared by every constrained request.
//
// The tokens a grammar can take are walked as a byte trie (prefix tree)
// stored in preorder: node k spans nodes [k, end) of its subtree, so a walk
// that rejects node k's byte skips its whole subtree at once. Tokens with
// no bytes (control tokens such as <|im_start|>, unused ids) are not in it;
// end-of-generation tokens are listed apart.
//
// Free text is where nearly every token is allowed, and walking the whole
// trie there would touch every node. So for each kind of text (a JSON
// string body; raw text ended by a '<' word) the vocabulary is split once:
// "plain" tokens — valid UTF-8 by themselves, without any byte that could
// end or escape the text — are accepted wholesale when they fit, and only
// the other tokens are walked, in a trie of their own.
//
// Immutable after Build; thread-safe to share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace lineage::server {

struct TokenTrie {
  struct Node {
    uint32_t end = 0;        // one past the last node of this subtree
    uint32_t tok_begin = 0;  // tokens whose bytes are exactly this node's path:
    uint32_t tok_end = 0;    //   tokens[tok_begin, tok_end)
    uint16_t depth = 0;      // bytes on the path, 1 for a child of the root
    uint8_t byte = 0;
    // Bit k: every token below has, after this node, only bytes that text
    // class k (kJsonPlain, kRawPlain) takes wholesale from a clean state; the
    // walk then accepts the subtree without visiting it (when it fits).
    uint8_t plain_below = 0;
    uint16_t max_suffix = 0;  // longest token below, in bytes after this node
  };
  static constexpr uint8_t kJsonPlain = 1, kRawPlain = 2;
  std::vector<Node> nodes;
  std::vector<int32_t> tokens;
  int max_depth = 0;

  // `ids` with their bytes; tokens longer than 65535 bytes are left out.
  static TokenTrie Build(const std::vector<std::pair<std::string, int32_t>>& ids);
  // One past the last token of node k's subtree (preorder keeps them contiguous).
  uint32_t SubtreeTokenEnd(size_t k) const {
    uint32_t end = nodes[k].end;
    return end < nodes.size() ? nodes[end].tok_begin : static_cast<uint32_t>(tokens.size());
  }
};

struct PlainText {
  TokenTrie special;             // tokens that are not plain
  std::vector<int32_t> plain;    // plain tokens, by ascending length
  std::vector<uint32_t> plain_bytes;  // their lengths
  std::vector<uint64_t> plain_bits;   // bit per token id
};

class TokenConstraintVocab {
 public:
  static std::shared_ptr<const TokenConstraintVocab> Build(const text::Tokenizer& tokenizer);

  int64_t vocab_size() const { return vocab_size_; }
  const std::vector<int32_t>& end_tokens() const { return end_tokens_; }
  bool is_end(int32_t id) const { return id >= 0 && id < vocab_size_ && end_bits_[id]; }
  const TokenTrie& all() const { return all_; }
  const PlainText& json_string() const { return json_string_; }
  const PlainText& raw_text() const { return raw_text_; }
  // Bytes of a token as the grammar sees them; empty for control tokens.
  const std::string& bytes(int32_t id) const { return bytes_[id]; }

 private:
  int64_t vocab_size_ = 0;
  std::vector<std::string> bytes_;
  std::vector<int32_t> end_tokens_;
  std::vector<bool> end_bits_;
  TokenTrie all_;
  PlainText json_string_, raw_text_;
};

}  // namespace lineage::server
