// Pretokenizer: splits text into the pieces ("words") that BPE encodes one
// at a time, with a sequence of regular expressions (PCRE2, UTF + UCP, JIT).
//
// Each pattern splits every piece produced by the previous one; both the
// matches and the text between them become pieces (Hugging Face's "Isolated"
// behaviour, and llama.cpp's). Look-arounds never see past the piece being
// split. Invalid UTF-8 is allowed: invalid bytes never match and end up in
// the between-match pieces.
//
// Immutable after Create; Split is thread-safe (match buffers are
// per-thread). Copies share the compiled patterns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace lineage::text {

// A piece of the input: byte offsets [begin, end).
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
};

class Pretokenizer {
 public:
  Pretokenizer() = default;

  // An empty pattern list yields one piece: the whole text.
  static Result<Pretokenizer> Create(const std::vector<std::string>& patterns);

  // Appends the pieces of text[range] in order; they tile the range exactly.
  void Split(std::string_view text, Span range, std::vector<Span>* pieces) const;

  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  struct Compiled;
  std::vector<std::string> patterns_;
  std::vector<std::shared_ptr<const Compiled>> compiled_;
};

// Regular expressions of a tokenizer.ggml.pre name (llama.cpp's table) and
// the options that go with it.
struct PretokenizerPreset {
  std::vector<std::string> patterns;
  bool ignore_merges = false;  // a word that is itself a token skips BPE (Llama 3)
  bool nfc = false;            // the original tokenizer.json normalizes to NFC (Qwen)
  bool add_bos = false;        // default when the file does not say
};

// Unknown names get llama.cpp's "default" preset and a false `known`.
PretokenizerPreset PresetForName(std::string_view pre_name, bool* known = nullptr);

// GPT-2's pattern, which a bare ByteLevel pre-tokenizer with use_regex uses.
const std::string& Gpt2Pattern();

}  // namespace lineage::text
