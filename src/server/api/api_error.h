// Error responses in each API's own shape, and the HTTP status of a Status.
//
// OpenAI:    {"error": {"message", "type", "param": null, "code": null}}
// Anthropic: {"type": "error", "error": {"type", "message"}}
// The mapping from StatusCode is the single place deciding which failures are
// the client's (4xx) and which are ours (5xx).
#pragma once

#include <string>

#include "core/status.h"

namespace lineage::server {

enum class ApiFlavor { kOpenAi, kAnthropic };

struct HttpError {
  int http_status = 500;
  std::string body;  // JSON in the API's error shape
};

int HttpStatusOf(StatusCode code);

HttpError MakeHttpError(ApiFlavor flavor, int http_status, const std::string& message);
HttpError MakeHttpError(ApiFlavor flavor, const Status& status);

}  // namespace lineage::server
