// SpmModel: SentencePiece-style BPE as llama.cpp runs it for vocabularies of
// type "llama" (Llama 2, Mistral v0.1, Phi-3, Gemma): the text's spaces are
// already escaped as U+2581; characters start as symbols, and the adjacent
// pair whose concatenation is the vocabulary token of highest score merges
// first (leftmost on ties). A character the vocabulary lacks falls back to
// byte tokens ("<0xXX>").
//
// Immutable after Build; Encode is const and thread-safe. It reads the
// caller's text -> id map, which must outlive it.
#pragma once

#include <array>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe.h"

namespace lineage::text {

class SpmModel {
 public:
  SpmModel() = default;
  SpmModel(const std::unordered_map<std::string_view, TokenId>* text_to_id, std::vector<float> scores,
           const std::array<TokenId, 256>& byte_ids);

  // Appends the ids of `escaped` (spaces already replaced by U+2581).
  void Encode(std::string_view escaped, std::vector<TokenId>* out) const;

  // True when no token contains U+2581 right after another character: then
  // no merge crosses the start of a run of U+2581, and encoding each
  // "word" (a U+2581 run and the characters up to the next run) on its own
  // gives exactly the ids of encoding the whole text, much faster.
  bool word_separable() const { return word_separable_; }

 private:
  TokenId Lookup(std::string_view s) const {
    auto it = text_to_id_->find(s);
    return it == text_to_id_->end() ? kNoToken : it->second;
  }
  float Score(TokenId id) const { return static_cast<size_t>(id) < scores_.size() ? scores_[id] : 0.0f; }

  const std::unordered_map<std::string_view, TokenId>* text_to_id_ = nullptr;
  std::vector<float> scores_;
  std::array<TokenId, 256> byte_ids_{};
  bool word_separable_ = false;
};

// Splits escaped SPM text into words: each starts at a run of U+2581 that
// follows another character (or at the start). Calls fn(word) in order.
template <typename Fn>
void ForEachSpmWord(std::string_view escaped, Fn&& fn) {
  constexpr std::string_view kMark = "\xE2\x96\x81";
  size_t start = 0, i = 0;
  bool prev_mark = true;  // no split before the first character
  while (i < escaped.size()) {
    bool mark = escaped.compare(i, kMark.size(), kMark) == 0;
    if (mark && !prev_mark) {
      fn(escaped.substr(start, i - start));
      start = i;
    }
    prev_mark = mark;
    i += mark ? kMark.size() : 1;
  }
  if (start < escaped.size()) fn(escaped.substr(start));
}

}  // namespace lineage::text
