#include "text/spm.h"

#include <queue>
#include <string>

#include "text/utf8.h"

namespace lineage::text {
namespace {

struct Symbol {
  int prev;
  int next;
  size_t begin;  // byte offset in the text
  size_t len;    // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t len;
  // Highest score first; on ties the leftmost pair.
  bool operator<(const Bigram& o) const { return score != o.score ? score < o.score : left > o.left; }
};


}  // namespace

void SpmModel::Encode(std::string_view text, std::vector<TokenId>* out) const {
  std::vector<Symbol> syms;
  for (size_t off = 0; off < text.size();) {
    // One symbol per character; an invalid byte is a symbol of its own (so
    // it cannot swallow the escaped space after it) and falls back to bytes.
    char32_t cp;
    size_t n = std::max<size_t>(1, DecodeUtf8(text.substr(off), &cp));
    int idx = static_cast<int>(syms.size());
    syms.push_back({idx - 1, off + n == text.size() ? -1 : idx + 1, off, n});
    off += n;
  }
  std::priority_queue<Bigram> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    std::string_view s = text.substr(syms[left].begin, syms[left].len + syms[right].len);
    TokenId id = Lookup(s);
    if (id == kNoToken) return;
    queue.push({left, right, Score(id), s.size()});
  };
  for (int i = 1; i < static_cast<int>(syms.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Symbol& l = syms[b.left];
    Symbol& r = syms[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  // A merge only ever forms a token, so a final symbol is a token or one
  // character the vocabulary lacks, which falls back to its bytes.
  auto emit = [&](size_t begin, size_t len) {
    std::string_view s = text.substr(begin, len);
    TokenId id = Lookup(s);
    if (id != kNoToken) {
      out->push_back(id);
      return;
    }
    for (char c : s) {
      TokenId b = byte_ids_[static_cast<uint8_t>(c)];
      if (b != kNoToken) out->push_back(b);
    }
  };
  if (syms.empty()) return;
  for (int i = 0; i != -1; i = syms[i].next) emit(syms[i].begin, syms[i].len);
}

}  // namespace lineage::text
