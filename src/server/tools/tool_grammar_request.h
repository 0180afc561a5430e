// From a request's tool_choice and reply format to the grammar its reply
// must follow.
//
// "required" (Anthropic "any") allows calls of any of the tools — up to
// kMaxParallelCalls when parallel_tool_calls allows more than one — and a
// named choice exactly one call of that tool. "auto" and "none" constrain
// nothing. The format is the one the rendered prompt shows the model: Qwen3.5's
// XML when it contains "<tool_call>\n<function=", else Qwen3's JSON (also what
// the output parser reads for templates with a format of their own).
// A prompt that ends inside <think> has the think block closed at once
// (kToolThinkMaxBytes): the constraint guarantees the call, and a bounded
// think would spend max_tokens on reasoning first.
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "core/status.h"
#include "server/api/api_request.h"
#include "server/tools/tool_grammar.h"

namespace lineage::server {

inline constexpr int kMaxParallelCalls = 8;
inline constexpr int64_t kToolThinkMaxBytes = 0;

ToolCallFormat DetectToolCallFormat(std::string_view rendered_prompt);

// A reply format of json_object or json_schema (ApiRequest::reply_format),
// when no call is forced, makes the reply one JSON value (an object; the
// schema's, for json_schema); a forced call is the reply's shape otherwise.
// Null when the request does not constrain its reply. kInvalidArgument when
// it asks for a call it cannot have (no tools, a name not among them) or a
// schema the grammar cannot hold (not an object or array at the root).
Result<std::shared_ptr<const ToolGrammar>> ReplyGrammarForRequest(const ApiRequest& request, std::string_view rendered_prompt,
                                                                 bool reasoning_open);

}  // namespace lineage::server
