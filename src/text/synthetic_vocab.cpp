#include "text/synthetic_vocab.h"

#include <string>
#include <vector>

namespace lineage::text {
namespace {

// GPT-2's byte -> printable code point map, UTF-8 encoded.
std::string ByteToken(int b) {
  int cp = b;
  bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  if (!printable) {
    int n = 0;
    for (int x = 0; x < b; ++x) {
      bool p = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255);
      if (!p) ++n;
    }
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

}  // namespace

// Minimal version: byte tokens, padding tokens and the special tokens. A
// vocabulary with learned merges replaces it.
model::VocabData MakeSyntheticVocab(int64_t vocab_size, VocabFlavour flavour, uint64_t seed) {
  (void)seed;
  const std::vector<std::string> specials = {
      "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
      "<tool_response>", "</tool_response>", "<think>", "</think>"};
  model::VocabData v;
  v.pre = flavour == VocabFlavour::kQwen35 ? "qwen35" : "qwen2";
  for (int b = 0; b < 256; ++b) v.tokens.push_back(ByteToken(b));
  int64_t n_normal = vocab_size - static_cast<int64_t>(specials.size());
  for (int64_t i = 256; i < n_normal; ++i) v.tokens.push_back("<|unused_" + std::to_string(i) + "|>");
  v.token_types.assign(v.tokens.size(), model::TokenType::kNormal);
  for (int64_t i = 256; i < n_normal; ++i) v.token_types[i] = model::TokenType::kUnused;
  for (const std::string& s : specials) {
    v.tokens.push_back(s);
    v.token_types.push_back(model::TokenType::kControl);
  }
  v.eos_id = n_normal + 2;  // <|im_end|>
  v.pad_id = n_normal;      // <|endoftext|>
  return v;
}

}  // namespace lineage::text
