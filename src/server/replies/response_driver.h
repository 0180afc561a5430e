// ResponseDriver: runs one response from a GenerationStream to the bytes the
// client receives.
//
//   stream -> Utf8Repair -> StopMatcher -> OutputParser -> ResponseFormatter
//
// A stop string that matches cancels the generation; the driver still waits
// for the backend to close the stream so usage and the report are complete.
// A write that fails (client gone) cancels the generation and ends the
// response. Not thread-safe: one connection thread drives one response.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "server/api/api_request.h"
#include "server/generation/backend.h"
#include "server/replies/output_parser.h"
#include "server/replies/response_format.h"
#include "server/replies/stop_matcher.h"
#include "server/replies/utf8_repair.h"

namespace lineage::server {

class ResponseDriver {
 public:
  // Returns false when the bytes could not be delivered.
  using Writer = std::function<bool(std::string_view)>;

  ResponseDriver(const ApiRequest& request, Submission submission, std::unique_ptr<ResponseFormatter> formatter);

  // Streaming: waits up to `wait` for output, writes what it produced, and
  // returns true while the response goes on. Sends keep-alive bytes after
  // `keep_alive` of silence.
  bool Step(const Writer& write, std::chrono::milliseconds wait, std::chrono::milliseconds keep_alive);

  // Non-streaming: runs to the end. On success `*body` is the JSON response;
  // a generation error returns its Status. `client_gone`, when given, is
  // polled a few times a second; once it says true the generation is
  // cancelled and RunToEnd returns an IoError (client_gone() is then true).
  Status RunToEnd(std::string* body, const std::function<bool()>& client_gone = {});

  // After the response ended early (client gone) or never ran: cancels the
  // generation and waits up to `timeout` for the backend's final report.
  void Drain(std::chrono::milliseconds timeout);

  bool finished() const { return finished_; }
  bool client_gone() const { return client_gone_; }
  const RequestReport& report() const { return report_; }
  // Of the completion tokens, those the parser saw inside the reasoning block.
  int64_t reasoning_tokens() const { return reasoning_tokens_; }
  FinishReason backend_finish() const { return backend_finish_; }

 private:
  // Feeds text through repair/stop/parse and formats the events.
  std::string Process(std::string_view bytes);
  std::string Flush();
  std::string FormatEvents(const std::vector<OutputEvent>& events);
  FinishInfo MakeFinishInfo() const;

  ApiRequest request_;  // copied: the driver may outlive the caller's request
  Submission submission_;
  std::unique_ptr<ResponseFormatter> formatter_;
  Utf8Repair utf8_;
  StopMatcher stop_;
  OutputParser parser_;
  bool begun_ = false;
  bool finished_ = false;
  bool client_gone_ = false;
  int64_t cached_tokens_ = 0;
  int64_t reported_prefill_ = 0;
  static constexpr std::chrono::milliseconds kProgressInterval{1000};
  int64_t completion_tokens_ = 0;
  int64_t reasoning_tokens_ = 0;
  int num_tool_calls_ = 0;
  FinishReason backend_finish_ = FinishReason::kEndOfSequence;
  RequestReport report_;
  Status error_;
  std::chrono::steady_clock::time_point last_write_ = std::chrono::steady_clock::now();
};

}  // namespace lineage::server
