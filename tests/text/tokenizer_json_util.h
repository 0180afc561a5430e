// Builds Hugging Face tokenizer.json documents from a VocabData, for tests
// that load the same vocabulary through both paths.
#pragma once

#include <nlohmann/json.hpp>

#include "model/vocab_data.h"
#include "text/pretokenizer.h"

namespace lineage::text::testing {

using json = nlohmann::json;

// tokenizer.json for a VocabData; merges alternate between the "a b" and
// ["a", "b"] spellings so both parse paths are used.
inline nlohmann::json JsonFromVocab(const model::VocabData& v, nlohmann::json pre_tokenizer,
                                    nlohmann::json normalizer) {
  json vocab = json::object(), added = json::array(), merges = json::array();
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    auto t = v.token_types[i];
    if (t == model::TokenType::kControl || t == model::TokenType::kUserDefined) {
      added.push_back({{"id", i}, {"content", v.tokens[i]}, {"special", t == model::TokenType::kControl},
                       {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"single_word", false}});
    } else {
      vocab[v.tokens[i]] = i;
    }
  }
  for (size_t r = 0; r < v.merges.size(); ++r) {
    const std::string& m = v.merges[r];
    size_t sp = m.find(' ', 1);
    if (r % 2) merges.push_back(m);
    else merges.push_back(json::array({m.substr(0, sp), m.substr(sp + 1)}));
  }
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", normalizer},
          {"pre_tokenizer", pre_tokenizer},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}},
          {"model",
           {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"byte_fallback", false},
            {"ignore_merges", false}, {"vocab", vocab}, {"merges", merges}}}};
}

inline nlohmann::json QwenPreTokenizer() {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", PresetForName("qwen35").patterns[0]}}}, {"behavior", "Isolated"},
             {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
}

}  // namespace lineage::text::testing
