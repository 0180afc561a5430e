// tokenizer.json and tokenizer_config.json in the form the Qwen checkpoints
// ship them (spec §6.1): byte-level BPE, NFC normaliser, the Qwen regex
// split then ByteLevel pre-tokenizer, ByteLevel decoder; control and
// user-defined tokens go to "added_tokens" (special: true for control),
// every other token to model.vocab. The text module reads these back.
// Kimi's vocabulary (VocabData::tiktoken_model set) ships tiktoken.model
// instead of tokenizer.json, with tokenizer_config.json naming the
// TikTokenTokenizer class and every special id in added_tokens_decoder.
#pragma once

#include <string>

#include "model/vocab_data.h"

namespace lineage::model {

// The pre-tokenizer regex for a tokenizer.ggml.pre value ("qwen35" or "qwen2").
const char* PreTokenizerRegex(const std::string& pre);

std::string MakeTokenizerJson(const VocabData& vocab);
std::string MakeTokenizerConfigJson(const VocabData& vocab, int64_t context_length);

}  // namespace lineage::model
