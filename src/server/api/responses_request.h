// Parsing of OpenAI Responses API bodies (POST /v1/responses, what Codex and
// the OpenAI SDKs' responses.create / responses.stream send) into ApiRequest
// (api_request.h). Pure function: no I/O, no state.
//
// The translation into the HF chat-template shape:
//   - `instructions` becomes a leading system message; `input` as a string
//     becomes one user message;
//   - input items: messages (role user, assistant, system or developer; the
//     latter two are system messages) with string or text-part content;
//     `reasoning` items become the reasoning_content of the next assistant
//     message; `function_call` items become tool_calls of the assistant
//     message right before them (or of a new one); `function_call_output`
//     items become "tool" messages;
//   - function tools {type: "function", name, description, parameters}
//     become OpenAI function tools; hosted tools (web_search, file_search,
//     ...) and custom tools run on OpenAI's side and are skipped;
//   - max_output_tokens, tool_choice, parallel_tool_calls, temperature,
//     top_p, stream; reasoning.effort "none" or "minimal" turns thinking off.
// This server keeps no responses: `previous_response_id` and item
// references are refused with a clear kInvalidArgument (send the whole
// conversation, as with store: false); `store` is accepted and ignored.
// Errors are kInvalidArgument naming the field; kUnsupported for images,
// files, structured output and background mode.
#pragma once

#include <string>

#include "core/status.h"
#include "server/api/api_request.h"

namespace lineage::server {

Result<ApiRequest> ParseOpenAiResponsesRequest(const std::string& body);

}  // namespace lineage::server
