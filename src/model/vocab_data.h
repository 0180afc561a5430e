// VocabData: what a model file stores about its tokenizer, independent of
// the file format. The model writer (mkmodel) stores it as GGUF metadata
// (tokenizer.ggml.*) or as tokenizer.json + tokenizer_config.json; the text
// module reads either back into a Tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lineage::model {

// GGUF token types (llama.cpp's llama_token_type).
enum class TokenType : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

struct VocabData {
  std::string model = "gpt2";           // tokenizer.ggml.model
  std::string pre = "qwen35";           // tokenizer.ggml.pre: selects the pre-tokenizer regex
  std::vector<std::string> tokens;      // id -> token text, byte-level encoded (GPT-2 byte map)
  std::vector<TokenType> token_types;   // same size as tokens
  std::vector<std::string> merges;      // "a b", in priority order
  int64_t bos_id = -1;                  // -1: none
  int64_t eos_id = -1;
  int64_t pad_id = -1;
  bool add_bos = false;
  std::string chat_template;            // Jinja source; empty when the model has none
  // Kimi's form: when set, the Hugging Face directory ships this text as
  // tiktoken.model (the normal tokens' bytes by rank, text/tiktoken.h) and
  // no tokenizer.json, as the real Kimi repositories do. GGUF is unaffected.
  std::string tiktoken_model;
};

}  // namespace lineage::model
