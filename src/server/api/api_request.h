// ApiRequest: one generation request from any of the HTTP APIs (OpenAI chat
// completions, completions and responses, Anthropic messages), in the
// one shape the rest of the server and the backend understand.
//
// Invariants after a successful parse (openai_request.h, anthropic_request.h):
//   - chat requests: `messages` is a non-empty JSON array in the Hugging Face
//     chat-template shape (system messages may come anywhere; the prompt
//     builder folds them where the template wants them only first):
//     {"role": system|user|assistant|tool, "content":
//     string, optional "tool_calls": [{"id", "type": "function", "function":
//     {"name", "arguments": object}}], optional "reasoning_content": string,
//     optional "tool_call_id": string}. Content is always a string.
//   - `tools` is a JSON array (possibly empty) in OpenAI function form:
//     {"type": "function", "function": {"name", "description", "parameters"}}.
//   - completion requests: `messages` is empty and `prompt` holds the text.
// A plain value type; no thread-safety concerns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace lineage::server {

enum class ApiKind { kOpenAiChat, kOpenAiCompletion, kAnthropicMessages, kOpenAiResponses };

enum class ToolChoice { kAuto, kNone, kRequired, kNamed };

struct SamplingParams {
  int64_t max_tokens = -1;        // -1: until end of sequence or the context is full
  float temperature = 1.0f;       // 0 means greedy
  float top_p = 1.0f;             // 1 disables nucleus sampling
  int32_t top_k = 0;              // 0 disables top-k
  std::optional<uint64_t> seed;   // absent: a fresh seed per request
  // OpenAI's adjustments, applied before temperature (engine/sampler.h).
  std::vector<std::pair<int32_t, float>> logit_bias;  // (token id, -100..100); ids checked by the backend
  float frequency_penalty = 0.0f;  // -2..2
  float presence_penalty = 0.0f;   // -2..2
  // Speculative decoding, llama-server's per-request fields
  // ("speculative.type", "speculative.n_max", "speculative.n_min"); absent:
  // the server's --spec-type / --draft-max / --draft-min.
  std::optional<std::string> spec_type;
  std::optional<int64_t> spec_draft_max, spec_draft_min;
  // Log-probabilities of the tokens generated (OpenAI chat `logprobs` with
  // `top_logprobs`, completions `logprobs`: N): -1 none; else each token's
  // and its `top_logprobs` most likely alternatives'.
  int32_t top_logprobs = -1;
};

// The reply's shape: OpenAI response_format, the Responses API's text.format.
enum class ReplyFormat { kText, kJsonObject, kJsonSchema };

struct ApiRequest {
  ApiKind api = ApiKind::kOpenAiChat;
  std::string model;
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  ToolChoice tool_choice = ToolChoice::kAuto;
  std::string tool_choice_name;   // set when tool_choice == kNamed
  // More than one call per reply (OpenAI parallel_tool_calls, Anthropic
  // tool_choice.disable_parallel_tool_use negated); enforced for required choices.
  bool parallel_tool_calls = true;
  std::string prompt;             // completions only
  SamplingParams sampling;
  ReplyFormat reply_format = ReplyFormat::kText;
  nlohmann::ordered_json reply_schema;  // kJsonSchema: the schema the reply follows
  std::vector<std::string> stop;  // stop strings, matched on the decoded text
  bool stream = false;
  bool include_usage = false;     // OpenAI stream_options.include_usage
  // OpenAI `n`: choices generated for the prompt, each its own sequence
  // (the cache may restore the later ones' prompt from the first's).
  int64_t n = 1;
  static constexpr int64_t kMaxChoices = 16;
  // Extra variables for the chat template (e.g. enable_thinking); an object.
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  // A leading Anthropic system block starting "x-anthropic-billing-header:",
  // taken out of the system text by the parser (Claude Code puts a per-session
  // hash in it); PromptBuilderOptions decide whether it is rendered.
  std::string billing_header;

  bool is_chat() const { return api != ApiKind::kOpenAiCompletion; }
  // Whether tool calls in the output are parsed into structured calls.
  bool parse_tool_calls() const { return is_chat() && tool_choice != ToolChoice::kNone && !tools.empty(); }
};

}  // namespace lineage::server
