// Parsing of Anthropic /v1/messages request bodies into ApiRequest
// (api_request.h). Pure function: no I/O, no state.
//
// The translation into the HF chat-template shape:
//   - `system` (a string or text blocks) becomes a leading system message,
//     except a first block starting "x-anthropic-billing-header:", which
//     goes to ApiRequest::billing_header;
//   - messages with role "system" (mid-conversation) stay system messages;
//   - user tool_result blocks become "tool" messages (in block order, before
//     the user's own text of the same turn, which is how OpenAI clients and
//     chat templates order them);
//   - assistant thinking blocks become reasoning_content, tool_use blocks
//     become tool_calls with the input object as arguments;
//   - tools {name, description, input_schema} become OpenAI function tools;
//   - thinking {"type": "enabled"|"disabled"} becomes enable_thinking.
// Errors are kInvalidArgument naming the field; kUnsupported for images and
// documents.
#pragma once

#include <string>

#include "core/status.h"
#include "server/api/api_request.h"

namespace lineage::server {

Result<ApiRequest> ParseAnthropicMessagesRequest(const std::string& body);

// /v1/messages/count_tokens: the same body without max_tokens.
Result<ApiRequest> ParseAnthropicCountTokensRequest(const std::string& body);

}  // namespace lineage::server
