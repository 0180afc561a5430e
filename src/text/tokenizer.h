// Tokenizer: byte-level BPE (GPT-2 / Qwen / Llama 3 style) text <-> token ids;
// also SentencePiece-style vocabularies from GGUF (see spm.h), which skip the
// normalizer and regex steps below.
//
// Encoding: added tokens are matched whole in the raw text first (control
// tokens only when EncodeOptions::parse_special; user-defined ones always,
// as llama.cpp and Hugging Face do); the remaining text is normalized (NFC
// when the tokenizer asks), split by the pre-tokenizer regexes, and each
// piece is BPE-encoded from its bytes. Any byte string encodes (invalid
// UTF-8 falls back to byte tokens) and decodes back to the same bytes
// unless NFC changed it.
//
// A Tokenizer is an immutable handle to shared tables: copying is cheap,
// and every method is const and thread-safe (the word cache is per thread).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/gguf_file.h"
#include "model/vocab_data.h"
#include "text/bpe.h"
#include "text/tokenizer_spec.h"

namespace lineage::text {

struct EncodeOptions {
  bool parse_special = false;  // match control tokens (<|im_start|>) written in the text
  bool add_special = false;    // prepend BOS when the tokenizer's add_bos says so
  // Stop soon after the output holds more than this many ids (the ids then
  // end early): a caller that rejects longer texts need not encode them whole.
  size_t max_tokens = SIZE_MAX;
};

struct DecodeOptions {
  bool render_special = true;  // write control tokens' text; false drops them
};

class Tokenizer {
 public:
  Tokenizer() = default;

  static Result<Tokenizer> Build(TokenizerSpec spec);
  static Result<Tokenizer> FromVocabData(const model::VocabData& vocab);
  // tokenizer.ggml.* metadata of a GGUF file (model "gpt2" or "llama").
  static Result<Tokenizer> FromGguf(const model::GgufFile& gguf);
  // A Hugging Face tokenizer.json, with the optional tokenizer_config.json
  // text (bos/eos token names, add_bos_token, chat_template). Errors name
  // the file (the paths are used in messages only) and the field.
  static Result<Tokenizer> FromHfJson(std::string_view tokenizer_json, std::string_view tokenizer_config_json = {},
                                      const std::string& tokenizer_path = "tokenizer.json",
                                      const std::string& config_path = "tokenizer_config.json");

  // A default-constructed Tokenizer is empty; every method below REQUIRES
  // valid().
  bool valid() const { return impl_ != nullptr; }

  std::vector<TokenId> Encode(std::string_view text, EncodeOptions options = {}) const;
  void EncodeAppend(std::string_view text, EncodeOptions options, std::vector<TokenId>* out) const;

  std::string Decode(std::span<const TokenId> ids, DecodeOptions options = {}) const;
  // Raw bytes of one token (a fragment of UTF-8 for byte-level tokens);
  // empty for ids out of range.
  std::string_view TokenBytes(TokenId id) const;
  // Stored text of one token (byte-level form for normal tokens); empty for
  // ids out of range (kNoToken: a tokenizer without that special token).
  std::string_view TokenText(TokenId id) const;
  TokenId TextToId(std::string_view token_text) const;  // kNoToken when absent

  int64_t vocab_size() const;
  model::TokenType token_type(TokenId id) const;
  bool IsControl(TokenId id) const;
  // End of generation: eos, eot and the usual end-of-turn tokens.
  bool IsEndOfGeneration(TokenId id) const;
  TokenId bos_id() const;
  TokenId eos_id() const;
  TokenId eot_id() const;
  TokenId pad_id() const;
  bool add_bos() const;
  const std::string& chat_template() const;
  size_t num_merges() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// From a model path: a directory holding tokenizer.json (and optionally
// tokenizer_config.json), a tokenizer.json file, or a .gguf file.
Result<Tokenizer> LoadTokenizer(const std::string& model_path);

}  // namespace lineage::text
