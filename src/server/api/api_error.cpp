#include "server/api/api_error.h"

#include <nlohmann/json.hpp>

namespace lineage::server {

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kUnsupported: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kResourceExhausted: return 503;
    default: return 500;
  }
}

static const char* OpenAiType(int http_status) {
  switch (http_status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 503: return "server_overloaded";
    default: return http_status < 500 ? "invalid_request_error" : "server_error";
  }
}

static const char* AnthropicType(int http_status) {
  switch (http_status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 503: return "overloaded_error";
    default: return http_status < 500 ? "invalid_request_error" : "api_error";
  }
}

HttpError MakeHttpError(ApiFlavor flavor, int http_status, const std::string& message) {
  nlohmann::ordered_json body;
  if (flavor == ApiFlavor::kOpenAi) {
    body = {{"error", {{"message", message}, {"type", OpenAiType(http_status)}, {"param", nullptr},
                       {"code", nullptr}}}};
  } else {
    body = {{"type", "error"}, {"error", {{"type", AnthropicType(http_status)}, {"message", message}}}};
  }
  return {http_status, body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)};
}

HttpError MakeHttpError(ApiFlavor flavor, const Status& status) {
  return MakeHttpError(flavor, HttpStatusOf(status.code()), status.message());
}

}  // namespace lineage::server
