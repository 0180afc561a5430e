// TokenizerSpec: everything a byte-level BPE tokenizer is built from, in one
// neutral form. The tokenizer.json and GGUF loaders fill it; Tokenizer::Build
// checks it and builds the fast tables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "model/vocab_data.h"

namespace lineage::text {

struct AddedTokenSpec {
  int32_t id = -1;
  bool special = false;  // control token: matched in text only when asked
  bool lstrip = false;   // swallows whitespace on its left when matched
  bool rstrip = false;   // ... and on its right
};

// kBpe: byte-level BPE with merges (gpt2). kSpm: SentencePiece-style merges
// by token score over U+2581-escaped text with <0xXX> byte fallback (llama).
enum class TokenizerKind { kBpe, kSpm };

struct TokenizerSpec {
  TokenizerKind kind = TokenizerKind::kBpe;
  // id -> text. Normal tokens are byte-level text (GPT-2 map); added tokens
  // are their literal text. Empty strings mark holes (ids never produced).
  std::vector<std::string> tokens;
  std::vector<model::TokenType> types;  // same size as tokens
  std::vector<std::pair<std::string, std::string>> merges;  // priority order (kBpe)
  std::vector<float> scores;            // per token, higher merges first (kSpm)
  std::vector<AddedTokenSpec> added;    // matched whole before BPE
  std::vector<std::string> pre_patterns;  // regex sequence, "isolated" splits
  // kBpe: ByteLevel(add_prefix_space=true). kSpm: a space before the text
  // at the start and after every added token, removed again by Decode.
  bool add_prefix_space = false;
  bool nfc = false;
  bool ignore_merges = false;
  bool add_bos = false;
  int32_t bos_id = -1, eos_id = -1, eot_id = -1, pad_id = -1;
  std::string chat_template;
};

// The spec of a GGUF-style vocabulary (what a model file stores). Token
// types CONTROL and UNKNOWN become special added tokens, USER_DEFINED
// non-special ones; the pre name selects the regexes (PresetForName).
TokenizerSpec SpecFromVocabData(const model::VocabData& vocab);

// Applies tokenizer_config.json to a spec whose tokens are filled: the
// bos/eos/pad token names, add_bos_token and chat_template.
Status ApplyTokenizerConfig(std::string_view config_json, const std::string& config_path, TokenizerSpec* spec);

}  // namespace lineage::text
