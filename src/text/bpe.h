// BPE over token ids: the merge table (pair of ids -> rank and merged id) and
// the per-word merge loop. A word's bytes start as byte tokens; the
// adjacent pair with the lowest rank (leftmost on ties) is merged until no
// pair has a merge. This is the Hugging Face / llama.cpp rule.
//
// Immutable after Build; EncodeWord is const and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace lineage::text {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

class BpeModel {
 public:
  struct Merge {
    TokenId left = kNoToken;
    TokenId right = kNoToken;
    TokenId merged = kNoToken;
  };

  // `byte_ids[b]` is the token of byte b (kNoToken when the vocabulary has
  // none: such bytes are dropped, as llama.cpp does). `merges` in priority
  // order; rank = index. A pair listed twice keeps its first rank.
  static BpeModel Build(const std::array<TokenId, 256>& byte_ids, const std::vector<Merge>& merges);

  // Appends the ids of one pre-tokenized word (raw bytes).
  void EncodeWord(std::string_view bytes, std::vector<TokenId>* out) const;

  size_t num_merges() const { return num_merges_; }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    TokenId merged = kNoToken;
  };
  static constexpr uint64_t kEmpty = ~0ULL;
  static uint64_t Key(TokenId a, TokenId b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  // Returns the slot of (a, b), or nullptr when the pair has no merge.
  const Slot* Find(TokenId a, TokenId b) const;
  void EncodeShort(std::vector<TokenId>* ids) const;
  void EncodeLong(std::vector<TokenId>* ids) const;

  std::array<TokenId, 256> byte_ids_{};
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  size_t num_merges_ = 0;
};

}  // namespace lineage::text
