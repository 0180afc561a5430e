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
           const std::array<TokenId, 256>& byte_ids)
      : text_to_id_(text_to_id), scores_(std::move(scores)), byte_ids_(byte_ids) {}

  // Appends the ids of `escaped` (spaces already replaced by U+2581).
  void Encode(std::string_view escaped, std::vector<TokenId>* out) const;

 private:
  TokenId Lookup(std::string_view s) const {
    auto it = text_to_id_->find(s);
    return it == text_to_id_->end() ? kNoToken : it->second;
  }
  float Score(TokenId id) const { return static_cast<size_t>(id) < scores_.size() ? scores_[id] : 0.0f; }

  const std::unordered_map<std::string_view, TokenId>* text_to_id_ = nullptr;
  std::vector<float> scores_;
  std::array<TokenId, 256> byte_ids_{};
};

}  // namespace lineage::text
