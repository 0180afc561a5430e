// Parsing of OpenAI /v1/chat/completions and /v1/completions request bodies
// into ApiRequest (api_request.h). Pure functions: no I/O, no state.
//
// Errors are kInvalidArgument (a 400 in OpenAI's error shape) naming the
// field; kUnsupported for valid requests the server does not implement
// (n > 1, image parts).
#pragma once

#include <string>

#include "core/status.h"
#include "server/api/api_request.h"

namespace lineage::server {

Result<ApiRequest> ParseOpenAiChatRequest(const std::string& body);
Result<ApiRequest> ParseOpenAiCompletionRequest(const std::string& body);

}  // namespace lineage::server
