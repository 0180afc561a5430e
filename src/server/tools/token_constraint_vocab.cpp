#include "server/tools/token_constraint_vocab.h"

#include <algorithm>

#include "text/utf8.h"

namespace lineage::server {
namespace {

// A JSON string body byte that neither ends nor escapes the string nor
// starts the "</" it may not contain.
bool PlainJsonByte(uint8_t b) { return b >= 0x20 && b != '"' && b != '\\' && b != '<'; }
// Raw text ends or is refused only at a word starting with '<'.
bool PlainRawByte(uint8_t b) { return b != '<'; }

template <typename IsPlainByte>
PlainText SplitPlain(const std::vector<std::pair<std::string, int32_t>>& tokens, int64_t vocab_size, IsPlainByte plain_byte) {
  PlainText out;
  out.plain_bits.assign((vocab_size + 63) / 64, 0);
  std::vector<std::pair<std::string, int32_t>> special;
  std::vector<std::pair<uint32_t, int32_t>> plain;
  for (const auto& [bytes, id] : tokens) {
    bool is_plain = text::IsValidUtf8(bytes) &&
                    std::all_of(bytes.begin(), bytes.end(), [&](char c) { return plain_byte(static_cast<uint8_t>(c)); });
    if (is_plain) plain.push_back({static_cast<uint32_t>(bytes.size()), id});
    else special.push_back({bytes, id});
  }
  std::sort(plain.begin(), plain.end());
  for (const auto& [len, id] : plain) {
    out.plain.push_back(id);
    out.plain_bytes.push_back(len);
    out.plain_bits[id / 64] |= uint64_t{1} << (id % 64);
  }
  out.special = TokenTrie::Build(special);
  return out;
}

// An offset from which `bytes` is valid UTF-8 made of plain bytes only: the
// first character start after the last non-plain byte, or bytes.size() when
// that suffix is not valid (conservative: it only costs a skipped shortcut).
template <typename IsPlainByte>
size_t PlainSuffixStart(std::string_view bytes, IsPlainByte plain_byte) {
  size_t d = bytes.size();
  while (d > 0 && plain_byte(static_cast<uint8_t>(bytes[d - 1]))) --d;
  while (d < bytes.size() && (static_cast<uint8_t>(bytes[d]) & 0xC0) == 0x80) ++d;
  return text::IsValidUtf8(bytes.substr(d)) ? d : bytes.size();
}

}  // namespace

TokenTrie TokenTrie::Build(const std::vector<std::pair<std::string, int32_t>>& ids) {
  std::vector<const std::pair<std::string, int32_t>*> sorted;
  for (const auto& p : ids)
    if (!p.first.empty() && p.first.size() <= 0xFFFF) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->first != b->first ? a->first < b->first : a->second < b->second;
  });
  TokenTrie t;
  std::vector<uint32_t> open;  // node index per depth on the current path
  std::string_view prev;
  for (const auto* p : sorted) {
    std::string_view s = p->first;
    size_t common = 0;
    while (common < s.size() && common < prev.size() && s[common] == prev[common]) ++common;
    // Close the nodes below the common prefix: their subtrees end here.
    while (open.size() > common) {
      t.nodes[open.back()].end = static_cast<uint32_t>(t.nodes.size());
      open.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      Node n;
      n.byte = static_cast<uint8_t>(s[d]);
      n.depth = static_cast<uint16_t>(d + 1);
      n.tok_begin = n.tok_end = static_cast<uint32_t>(t.tokens.size());
      open.push_back(static_cast<uint32_t>(t.nodes.size()));
      t.nodes.push_back(n);
    }
    // Sorted order puts tokens with equal bytes next to each other, so the
    // node's token range stays contiguous.
    Node& leaf = t.nodes[open.back()];
    if (leaf.tok_begin == leaf.tok_end) leaf.tok_begin = leaf.tok_end = static_cast<uint32_t>(t.tokens.size());
    t.tokens.push_back(p->second);
    leaf.tok_end = static_cast<uint32_t>(t.tokens.size());
    t.max_depth = std::max<int>(t.max_depth, static_cast<int>(s.size()));
    prev = s;
  }
  while (!open.empty()) {
    t.nodes[open.back()].end = static_cast<uint32_t>(t.nodes.size());
    open.pop_back();
  }
  // Plain-below flags and suffix lengths: each token clears the flag of the
  // nodes on its path above where its plain suffix starts.
  for (Node& n : t.nodes) n.plain_below = kJsonPlain | kRawPlain;
  std::vector<uint32_t> path;
  for (size_t k = 0; k < t.nodes.size(); ++k) {
    path.resize(t.nodes[k].depth - 1);
    path.push_back(static_cast<uint32_t>(k));
    for (uint32_t j = t.nodes[k].tok_begin; j < t.nodes[k].tok_end; ++j) {
      std::string_view s = sorted[j]->first;  // tokens were appended in sorted order
      size_t json_from = PlainSuffixStart(s, PlainJsonByte), raw_from = PlainSuffixStart(s, PlainRawByte);
      for (size_t d = 1; d <= path.size(); ++d) {  // path[d - 1] has depth d: the suffix is s[d:]
        Node& n = t.nodes[path[d - 1]];
        if (d < json_from) n.plain_below &= ~kJsonPlain;
        if (d < raw_from) n.plain_below &= ~kRawPlain;
        n.max_suffix = std::max<uint16_t>(n.max_suffix, static_cast<uint16_t>(s.size() - d));
      }
    }
  }
  return t;
}

std::shared_ptr<const TokenConstraintVocab> TokenConstraintVocab::Build(const text::Tokenizer& tokenizer) {
  auto v = std::make_shared<TokenConstraintVocab>();
  v->vocab_size_ = tokenizer.vocab_size();
  v->bytes_.resize(v->vocab_size_);
  v->end_bits_.assign(v->vocab_size_, false);
  std::vector<std::pair<std::string, int32_t>> tokens;
  for (int32_t id = 0; id < v->vocab_size_; ++id) {
    if (tokenizer.IsEndOfGeneration(id)) {
      v->end_tokens_.push_back(id);
      v->end_bits_[id] = true;
      continue;
    }
    // What the scheduler streams for the token: control tokens stream nothing.
    if (tokenizer.IsControl(id)) continue;
    std::string_view b = tokenizer.TokenBytes(id);
    if (b.empty()) continue;
    v->bytes_[id] = std::string(b);
    tokens.push_back({std::string(b), id});
  }
  v->all_ = TokenTrie::Build(tokens);
  v->json_string_ = SplitPlain(tokens, v->vocab_size_, PlainJsonByte);
  v->raw_text_ = SplitPlain(tokens, v->vocab_size_, PlainRawByte);
  return v;
}

}  // namespace lineage::server
