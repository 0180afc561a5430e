// ResponseFormatter: turns the parsed output of one generation into one
// API's response, streaming (Server-Sent Events) or not.
//
// Call order: Begin() once, Event() per parsed output event, Finish() once.
// A streaming formatter returns the SSE bytes to send after each call; a
// non-streaming one returns "" until Finish(), which returns the JSON body.
// Not thread-safe; one per response.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/api/api_request.h"
#include "server/generation/backend.h"
#include "server/replies/output_parser.h"

namespace lineage::server {

struct FinishInfo {
  enum class Reason { kStop, kLength, kToolCalls, kStopSequence };
  Reason reason = Reason::kStop;
  std::string stop_sequence;    // when reason == kStopSequence
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;    // restore length
  int64_t completion_tokens = 0;
  // Of completion_tokens, those generated inside the reasoning block: a
  // token counts when the parser was inside it before or after its text.
  int64_t reasoning_tokens = 0;
  // Where the time went (RequestReport); reported as "timings" in
  // non-streaming OpenAI responses, as llama-server does.
  std::string restore;          // "kind/tier"
  double admission_ms = 0, prefill_ms = 0, commit_ms = 0, ttft_ms = -1, total_ms = 0;
};

class ResponseFormatter {
 public:
  virtual ~ResponseFormatter() = default;
  virtual std::string Begin(int64_t prompt_tokens, int64_t cached_tokens) = 0;
  virtual std::string Event(const OutputEvent& event) = 0;
  virtual std::string Finish(const FinishInfo& info) = 0;
  // Log-probabilities of tokens generated since the last call (requests
  // with logprobs), before the events their text makes; APIs without
  // logprobs ignore them.
  virtual void Logprobs(std::vector<TokenLogprob> tokens) {}
  // Bytes that keep a quiet stream alive (and reveal a closed connection).
  virtual std::string KeepAlive() = 0;
  // An error after the response started (streaming only).
  virtual std::string StreamError(const std::string& message) = 0;
};

// Choice `index` of `count` (OpenAI `n`) of one response: the choices share
// its id and creation time (empty / 0: new ones).
struct OpenAiChoice {
  int64_t index = 0;
  int64_t count = 1;
  std::string id;
  int64_t created = 0;
};

// OpenAI chat completions and completions; Responses API requests
// (ApiKind::kOpenAiResponses) get MakeResponsesFormatter's. Of several
// choices, a streaming formatter does not end the stream (OpenAiStreamEnd
// does, after the last) and a whole one answers its choice alone
// (MergeOpenAiChoices joins them).
std::unique_ptr<ResponseFormatter> MakeOpenAiFormatter(const ApiRequest& request, const std::string& model,
                                                       const OpenAiChoice& choice = {});
std::string NewOpenAiId(const ApiRequest& request);
// The end of a stream of several choices: usage (summed in `total`) when
// asked for, then [DONE].
std::string OpenAiStreamEnd(const ApiRequest& request, const std::string& model, const OpenAiChoice& choice,
                            const FinishInfo& total);
// One body from the whole replies of every choice, in order: their choices,
// usage with the completion tokens summed.
Result<std::string> MergeOpenAiChoices(const std::vector<std::string>& bodies);
std::unique_ptr<ResponseFormatter> MakeResponsesFormatter(const ApiRequest& request, const std::string& model);
std::unique_ptr<ResponseFormatter> MakeAnthropicFormatter(const ApiRequest& request, const std::string& model);

// "data: <json>\n\n", with "event: <name>\n" first when a name is given.
std::string SseEvent(const nlohmann::ordered_json& data, const char* event_name = nullptr);
// JSON text; invalid UTF-8 cannot occur (Utf8Repair) but is replaced anyway.
std::string Dump(const nlohmann::ordered_json& v);
// prefix + 24 random alphanumerics ("chatcmpl-", "call_", "msg_", "toolu_").
std::string RandomId(const char* prefix);

}  // namespace lineage::server
