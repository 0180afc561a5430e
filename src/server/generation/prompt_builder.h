// PromptBuilder: turns an ApiRequest into the prompt token ids and the two
// lengths the cache needs from the chat template (DESIGN.md §2, §3.2):
//
//   anchor_tokens       end of the shared system + tools prefix: render the
//                       leading system messages and tools alone, tokenize
//                       that text (once per distinct text, remembered), take
//                       the common prefix with the prompt (the cache anchors
//                       a little before it: LookupHints);
//   system_end_tokens   with tools, where the system text ends when the
//                       template renders it before them (Qwen's do): the
//                       same, rendering the system messages without the
//                       tools; 0 unless it falls below the anchor, as it
//                       does not where the tools come first (GLM's);
//   history_end_tokens  where the rendered history ends and the generation
//                       prompt begins (rendered with and without it). The
//                       prompt is tokenized as history + generation prompt,
//                       so the boundary is a token boundary by construction.
//
// Also reports whether the prompt ends inside <think> (thinking templates),
// so the output parser starts in reasoning mode.
//
// Before rendering, system messages the template does not take
// mid-conversation are folded into their neighbours (system_messages.h),
// and a request's Anthropic billing header (ApiRequest::billing_header) is
// put back in front of the system text only when the options keep it.
//
// Thread-safety: Build() may run on many connection threads at once; the
// anchor memo is guarded by a mutex. Tokenizer and ChatTemplate are
// immutable and shared.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "server/api/api_request.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace lineage::server {

struct BuiltPrompt {
  std::vector<int32_t> tokens;
  int64_t anchor_tokens = 0;       // 0: none
  int64_t system_end_tokens = 0;   // 0: none; else < anchor_tokens
  int64_t history_end_tokens = 0;  // 0: none
  bool reasoning_open = false;
  std::string text;                // the rendered prompt (chat) or the raw prompt
};

struct PromptBuilderOptions {
  // Render the x-anthropic-billing-header system block (--keep-billing-header).
  // Off by default: its hash changes with every session's first prompt and
  // would end the shared system + tools prefix at its first byte.
  bool keep_billing_header = false;
};

class PromptBuilder {
 public:
  // `chat_template` absent: chat requests fail with kInvalidArgument.
  PromptBuilder(text::Tokenizer tokenizer, std::optional<ChatTemplate> chat_template,
                PromptBuilderOptions options = {});

  // The messages as the template will see them (folded system messages,
  // billing header kept or not).
  nlohmann::ordered_json TemplateMessages(const ApiRequest& request) const;

  // Template errors are kInvalidArgument (a 400: the request cannot be rendered).
  // A prompt of more than max_tokens is kOutOfRange, found while rendering
  // (a text longer than max_tokens of the longest token cannot fit, so the
  // render stops there) or while tokenizing (the rest is not encoded).
  Result<BuiltPrompt> Build(const ApiRequest& request, int64_t max_tokens = INT64_MAX) const;

  // Tokens anchor texts were memoised for (tests).
  size_t anchor_memo_size() const;

 private:
  std::vector<int32_t> AnchorTokens(const std::string& prefix_text) const;

  // The most text max_tokens tokens can encode; a rendering longer than
  // this is over the context before it is tokenized.
  size_t MaxRenderedBytes(int64_t max_tokens) const;

  text::Tokenizer tokenizer_;
  std::optional<ChatTemplate> template_;
  PromptBuilderOptions options_;
  size_t longest_token_bytes_ = 0;
  bool fold_system_ = false;  // the template refuses system messages after the first
  // A small LRU of anchor texts and their tokens: agents repeat one system
  // prompt on every request, and it can be 30k tokens long.
  static constexpr size_t kAnchorMemoEntries = 32;
  mutable std::mutex mu_;
  mutable std::list<std::pair<std::string, std::vector<int32_t>>> memo_;  // most recent first
};

// Length of the common prefix of two token sequences.
int64_t CommonPrefixTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

}  // namespace lineage::server
