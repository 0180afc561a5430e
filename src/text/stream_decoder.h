// StreamDecoder: turns generated token ids into text as they arrive, never
// emitting half a UTF-8 character. A byte-level token can end inside a
// multi-byte character (an emoji is often two or three tokens); those bytes
// are held until the character completes. Bytes that can never become valid
// are emitted as U+FFFD at once, so the output is always valid UTF-8.
//
// One decoder per stream; not thread-safe. It keeps a copy of the Tokenizer
// handle (cheap, shared tables).
#pragma once

#include <string>

#include "text/tokenizer.h"

namespace lineage::text {

class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer, DecodeOptions options = {})
      : tokenizer_(std::move(tokenizer)), options_(options) {}

  // Returns the text completed by `id` (possibly empty).
  std::string Push(TokenId id);
  // Feeds raw bytes (what Push does with a token's bytes).
  std::string PushBytes(std::string_view bytes);
  // Ends the stream: held bytes that never completed become U+FFFD.
  std::string Flush();

  size_t pending_bytes() const { return pending_.size(); }

 private:
  Tokenizer tokenizer_;
  DecodeOptions options_;
  std::string pending_;  // at most 3 bytes: an incomplete character
};

}  // namespace lineage::text
