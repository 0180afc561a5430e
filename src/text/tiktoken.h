// tiktoken.model: the vocabulary file of tiktoken-based tokenizers. Kimi K2
// and Kimi Linear ship it with tokenizer_config.json (and their own
// tokenization_kimi.py) instead of a tokenizer.json. One line per token,
// "<base64 of the token's bytes> <rank>", ranks 0..n-1 in order; the rank
// is the token id and the merge priority (inside a pre-tokenized word,
// tiktoken joins the adjacent pair whose concatenation has the lowest
// rank). Special tokens are not in the file: they take ids n.. and are named
// by tokenizer_config.json's added_tokens_decoder.
//
// It is read into the same byte-level BPE as tokenizer.json and GGUF. The
// merges are derived as llama.cpp's converter derives the GGUF form's: per
// token, the two parts that tiktoken's own joining reaches when it may use
// only lower ranks (a token it cannot reach in two parts gets no merge). So
// a tiktoken.model directory and the GGUF converted from it tokenize alike.
// The pre-tokenizer is Kimi's (preset "kimi-k2"): the file does not name one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "text/tokenizer.h"

namespace lineage::text {

// The file for tokens [0, n) given as raw bytes, rank = index.
std::string MakeTiktokenModel(const std::vector<std::string>& token_bytes);

// Token bytes by rank. Errors: a bad line, bad base64, ranks out of order.
Result<std::vector<std::string>> ParseTiktokenModel(std::string_view text, const std::string& where);

// Merges "a b" (byte-level text) in rank order, derived as above.
std::vector<std::string> TiktokenMerges(const std::vector<std::string>& token_bytes);

// A tokenizer from tiktoken.model and tokenizer_config.json (special tokens
// from added_tokens_decoder; bos/eos/pad, add_bos_token and chat_template as
// for tokenizer.json). `chat_template` (a chat_template.jinja file's text)
// is used when the config has none.
Result<Tokenizer> TokenizerFromTiktoken(std::string_view model_text, std::string_view config_json,
                                        std::string_view chat_template, const std::string& model_path,
                                        const std::string& config_path);

}  // namespace lineage::text
