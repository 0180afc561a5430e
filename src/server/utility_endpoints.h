// llama-server's utility endpoints where the concept is the same, with its
// request and response shapes (docs/server.md, "Utility endpoints"):
//   POST /tokenize       {content, add_special, parse_special, with_pieces} -> {tokens}
//   POST /detokenize     {tokens} -> {content}
//   POST /apply-template a chat completions body -> {prompt}
//   GET  /props          model, context, chat template, slots, build
// Each turns a request body into a response body or an error Status
// (kInvalidArgument: a 400); the HTTP layer only routes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/generation/backend.h"

namespace lineage::server {

Result<nlohmann::ordered_json> TokenizeResponse(const Backend& backend, const std::string& body);
Result<nlohmann::ordered_json> DetokenizeResponse(const Backend& backend, const std::string& body);
Result<nlohmann::ordered_json> ApplyTemplateResponse(Backend& backend, const std::string& body);
// `processing`: slots generating now (is_processing is llama-server's
// "busy" signal for scripts).
nlohmann::ordered_json PropsResponse(const Backend& backend, const std::string& build_info, int processing);

}  // namespace lineage::server
