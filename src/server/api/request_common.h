// Pieces of request parsing shared by the OpenAI and Anthropic parsers: the
// sampling fields both APIs spell the same way, and builders of the HF
// chat-template shapes for tools and tool calls (api_request.h).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/api/api_request.h"

namespace lineage::server {

// Upper bound accepted for max_tokens; the backend caps by the context.
inline constexpr int64_t kMaxTokensLimit = int64_t{1} << 30;

// temperature, top_p, top_k, seed.
Status ParseSampling(const nlohmann::ordered_json& body, SamplingParams* out);

// OpenAI's logit_bias ({"token id": bias}), frequency_penalty and
// presence_penalty, which the two OpenAI text endpoints share.
Status ParseLogitAdjustments(const nlohmann::ordered_json& body, SamplingParams* out);

// A reply format object at `path`: {"type": "text"}, {"type": "json_object"}
// or {"type": "json_schema"} with its schema under "json_schema.schema"
// (chat completions) or "schema" (the Responses API).
Status ParseReplyFormat(const nlohmann::ordered_json& format, const std::string& path, ApiRequest* req);

// {"type": "function", "function": {"name", ["description"], "parameters"}}.
nlohmann::ordered_json MakeTool(const std::string& name, const std::string& description, bool has_description,
                        nlohmann::ordered_json parameters);

// An OpenAI function definition {name, [description], [parameters]} at
// `path` (chat completions nest it under "function", the Responses API does
// not), appended to req->tools in MakeTool's shape.
Status AddFunctionTool(const nlohmann::ordered_json& f, const std::string& path, ApiRequest* req);

// Content as a string, null (""), or an array of parts {"type", "text"}
// whose type is one of `text_types`, joined into one string. Image, audio
// and file parts are kUnsupported; other types kInvalidArgument.
Status JoinTextParts(const nlohmann::ordered_json& content, const std::string& path,
                     std::initializer_list<std::string_view> text_types, std::string* out);

// OpenAI's tool_choice strings: "auto", "none", "required".
Status SetToolChoice(const std::string& value, ApiRequest* req);

// {"id", "type": "function", "function": {"name", "arguments": object}}.
nlohmann::ordered_json MakeToolCall(const std::string& id, const std::string& name, nlohmann::ordered_json arguments);

// OpenAI sends arguments as a JSON string; templates iterate them as a
// mapping. A string that is not a JSON object stays a string (the template
// decides whether it can render it).
nlohmann::ordered_json ArgumentsFromString(const std::string& arguments);

}  // namespace lineage::server
