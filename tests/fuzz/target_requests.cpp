// Fuzz target "requests": a request body through the parsers of both APIs
// (OpenAI chat and completions, Anthropic messages and count_tokens), as the
// server hands them the bytes it read.
#include <string>

#include "fuzz/fuzz_target.h"
#include "server/api/anthropic_request.h"
#include "server/api/openai_request.h"

namespace lineage::fuzz {
namespace {

int FuzzRequests(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  int accepted = 0;
  accepted |= server::ParseOpenAiChatRequest(body).ok();
  accepted |= server::ParseOpenAiCompletionRequest(body).ok();
  accepted |= server::ParseAnthropicMessagesRequest(body).ok();
  accepted |= server::ParseAnthropicCountTokensRequest(body).ok();
  return accepted;
}

LINEAGE_FUZZ_TARGET("requests", FuzzRequests,
                    {"{", "}", "[", "]", ",", ":", "\"", "null", "true", "false", "\\u0000", "\\ud800", "{\"a\":",
                     "[[[[[[[[", "\"messages\"", "\"role\"", "\"user\"", "\"assistant\"", "\"system\"", "\"tool\"",
                     "\"content\"", "\"text\"", "\"type\"", "\"tools\"", "\"function\"", "\"parameters\"",
                     "\"input_schema\"", "\"tool_choice\"", "\"required\"", "\"any\"", "\"auto\"", "\"none\"",
                     "\"name\"", "\"properties\"", "\"items\"", "\"minItems\"", "\"maxItems\"", "\"enum\"",
                     "\"anyOf\"", "\"$ref\"", "\"max_tokens\"", "\"temperature\"", "\"top_p\"", "\"stop\"",
                     "\"stream\"", "\"logprobs\"", "\"n\"", "\"seed\"", "\"prompt\"", "\"model\"",
                     "\"response_format\"", "\"json_schema\"", "\"tool_calls\"", "\"tool_use\"", "\"tool_result\"",
                     "\"arguments\"", "\"input\"", "\"thinking\"", "\"image_url\""},
                    1 << 16, {{"[", "]"}, {"{\"a\":", "}"}, {"{\"type\":\"array\",\"items\":", "}"},
                     {"{\"anyOf\":[", "]}"}, {"{\"properties\":{\"p\":", "}}"}});

}  // namespace
}  // namespace lineage::fuzz
