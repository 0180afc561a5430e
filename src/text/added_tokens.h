// AddedTokenMatcher: finds added tokens (<|im_start|>, <think>, ...) in raw
// text before any normalization or BPE. At each position the longest token
// wins, and the leftmost position wins overall. Control ("special") tokens
// take part only when the caller asks; user-defined ones always do.
//
// Immutable after construction; thread-safe.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe.h"

namespace lineage::text {

class AddedTokenMatcher {
 public:
  struct Entry {
    std::string text;
    TokenId id = kNoToken;
    bool special = false;
    bool lstrip = false;
    bool rstrip = false;
  };
  struct Match {
    size_t begin = 0;
    size_t end = 0;
    const Entry* entry = nullptr;
  };

  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<Entry> entries);

  // The first match at or after `from`; false when there is none.
  bool FindNext(std::string_view text, size_t from, bool parse_special, Match* m) const;
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;                      // sorted by first byte, then length descending
  std::array<uint32_t, 257> first_{};               // entries_[first_[b], first_[b+1]) start with byte b
  std::bitset<256> starts_;
  int single_first_ = -1;   // the only first byte, when all tokens share one
  bool has_plain_ = false;  // some token is not special (matched without parse_special)
};

}  // namespace lineage::text
