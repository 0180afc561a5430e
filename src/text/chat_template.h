// ChatTemplate: a model's chat template (Jinja source plus its BOS and EOS
// token strings) applied to chat requests the way Hugging Face transformers'
// apply_chat_template does. The template sees `messages`, `tools` (null when
// the request has none), `documents` (null), `add_generation_prompt`,
// `bos_token`, `eos_token`, and every extra keyword of the request
// (`enable_thinking`, `reasoning_effort`, ...).
//
// Besides rendering, it answers two questions for the prompt cache
// (DESIGN.md §2, §3.2):
//   * RenderPrefix: the text every conversation with a given system prompt
//     and tools starts with (the anchor);
//   * HistoryEnd: where the rendered history ends and the generation prompt
//     begins (the history-end capture point).
// Lengths are in bytes of the UTF-8 text and always fall on a character
// boundary.
//
// Thread-safety: configure (set_now, set_allow_mutation) before sharing;
// after that the const methods may run concurrently.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/jinja/template.h"

namespace lineage {

// The most a chat template file may hold: real ones are tens of KB.
inline constexpr uint64_t kMaxTemplateFileBytes = uint64_t{4} << 20;

struct ChatRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null, or an array of tool definitions
  bool add_generation_prompt = true;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // more template variables
  // A tighter bound than the template's own on the rendered text (0: none);
  // past it Apply fails with kOutOfRange and no more is rendered.
  size_t max_output_bytes = 0;
};

struct PrefixText {
  // The rendering of the leading system message(s) and tools alone, without
  // a generation prompt (or, for a template that cannot render that, the
  // shared prefix itself).
  std::string text;
  // How many leading bytes of `text` every conversation with these system
  // messages and tools renders identically (<= text.size()).
  size_t shared_chars = 0;
};

class ChatTemplate {
 public:
  static Result<ChatTemplate> Create(std::string_view source, std::string bos_token, std::string eos_token);

  // Errors: kOutOfRange when the text would exceed an output limit;
  // kInvalidArgument for a request or template the render refuses.
  Result<std::string> Apply(const ChatRequest& request) const;

  // messages: the conversation (only its leading system messages are used);
  // tools: null or an array. The shared part is found by rendering the
  // leading system messages and tools followed by three probe conversations
  // (two single user turns whose texts differ from their first character,
  // and a user/assistant/user exchange) and taking their longest common
  // prefix, cut further to what the system-and-tools-only rendering shares
  // with them when the template can render that (so that per-message
  // details such as a user's `name` stay outside the anchor); templates that put tools next to the last user message, or
  // demand a user turn, are handled because the probes are real
  // conversations. `extra` are the request's other template variables
  // (enable_thinking changes some system blocks). Fails only when no probe
  // renders.
  Result<PrefixText> RenderPrefix(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                  const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  // The byte offset where the history ends and the generation prompt begins:
  // the longest common prefix of the rendering with and without
  // add_generation_prompt.
  Result<size_t> HistoryEnd(const ChatRequest& request) const;

  // Fixes the time strftime_now sees (tests); the local time when unset.
  void set_now(std::optional<std::tm> now) { options_.now = now; }
  // See jinja::RenderOptions::allow_mutation (off: transformers' behaviour).
  void set_allow_mutation(bool allow) { options_.allow_mutation = allow; }

  // The variables the template is rendered with, as apply_chat_template passes them.
  nlohmann::ordered_json Context(const ChatRequest& request) const;

 private:
  ChatTemplate(jinja::Template t, std::string bos, std::string eos)
      : template_(std::move(t)), bos_token_(std::move(bos)), eos_token_(std::move(eos)) {}

  jinja::Template template_;
  std::string bos_token_;
  std::string eos_token_;
  jinja::RenderOptions options_;
};

// Length of the longest common prefix of a and b, backed off to a UTF-8
// character boundary.
size_t CommonPrefixBytes(std::string_view a, std::string_view b);

}  // namespace lineage
