// Content addresses of the disk tier (docs/disk-format.md, "Keys"). A page
// key names the KV rows of one page of one token prefix; a state key names the
// recurrent state after one token prefix. Both are chained over the tokens
// from the model fingerprint, so equal keys mean the same model, the same page
// size and the same token prefix: a page written for turn k is found again by
// every later snapshot of the lineage and by any anchor that is its prefix.
//
// Thread-safety: a KeyChain is immutable after construction.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/cache_types.h"
#include "cache/disk/format.h"

namespace lineage::cache::disk {

class KeyChain {
 public:
  // Hashes every full page of `tokens` once (O(tokens)).
  KeyChain(const Key128& fingerprint, int64_t page_tokens, TokenSpan tokens);

  int64_t num_pages() const { return (num_tokens_ + page_tokens_ - 1) / page_tokens_; }
  // Key of page p of the whole sequence (the last one may be partial).
  Key128 PageKey(int64_t p) const { return PageKeyAt(p, num_tokens_); }
  // Key of page p of the prefix of `length` tokens (p < ceil(length / page)).
  Key128 PageKeyAt(int64_t p, int64_t length) const;
  // Key of the recurrent state after the first n tokens (1 <= n <= size).
  Key128 StateKey(int64_t n) const;

 private:
  Key128 Link(const Key128& prev, int64_t first, int64_t num_rows) const;

  int64_t page_tokens_;
  int64_t num_tokens_;
  Tokens tokens_;                // a copy: a chain may outlive its caller's tokens
  Key128 root_;
  std::vector<Key128> full_;     // chain value after each full page
};

}  // namespace lineage::cache::disk
