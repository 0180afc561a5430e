#include "server/replies/response_driver.h"

namespace lineage::server {

namespace {
OutputParser::Options ParserOptions(const ApiRequest& req, const Submission& sub) {
  OutputParser::Options o;
  o.reasoning_open = sub.reasoning_open;
  o.parse_tool_calls = req.parse_tool_calls();
  o.tools = req.tools;
  return o;
}
}  // namespace

ResponseDriver::ResponseDriver(const ApiRequest& request, Submission submission,
                               std::unique_ptr<ResponseFormatter> formatter)
    : request_(request),
      submission_(std::move(submission)),
      formatter_(std::move(formatter)),
      stop_(request.stop),
      parser_(ParserOptions(request, submission_)) {}

std::string ResponseDriver::FormatEvents(const std::vector<OutputEvent>& events) {
  std::string out;
  for (const OutputEvent& e : events) {
    if (e.kind == OutputEvent::Kind::kToolCall) ++num_tool_calls_;
    out += formatter_->Event(e);
  }
  return out;
}

std::string ResponseDriver::Process(std::string_view bytes) {
  if (stop_.matched()) return "";
  std::string text = stop_.Feed(utf8_.Feed(bytes));
  if (stop_.matched()) submission_.stream->Cancel();
  if (text.empty()) return "";
  if (!request_.is_chat()) {
    OutputEvent e;
    e.text = std::move(text);
    return FormatEvents({e});
  }
  return FormatEvents(parser_.Feed(text));
}

std::string ResponseDriver::Flush() {
  std::string out;
  if (!stop_.matched()) {
    std::string tail = stop_.Feed(utf8_.Finish());
    if (!stop_.matched()) tail += stop_.Finish();
    if (!tail.empty()) {
      if (request_.is_chat()) {
        out += FormatEvents(parser_.Feed(tail));
      } else {
        OutputEvent e;
        e.text = std::move(tail);
        out += FormatEvents({e});
      }
    }
  }
  if (request_.is_chat()) out += FormatEvents(parser_.Finish());
  return out;
}

FinishInfo ResponseDriver::MakeFinishInfo() const {
  FinishInfo f;
  f.prompt_tokens = report_.prompt_tokens > 0 ? report_.prompt_tokens : submission_.prompt_tokens;
  f.cached_tokens = cached_tokens_;
  f.completion_tokens = std::max(report_.completion_tokens, completion_tokens_);
  f.reasoning_tokens = std::min(reasoning_tokens_, f.completion_tokens);
  f.restore = report_.restore_kind + "/" + report_.restore_tier;
  f.admission_ms = report_.admission_us * 1e-3;
  f.prefill_ms = report_.prefill_us * 1e-3;
  f.commit_ms = report_.commit_us * 1e-3;
  f.ttft_ms = report_.first_token_us < 0 ? -1 : report_.first_token_us * 1e-3;
  f.total_ms = report_.total_us * 1e-3;
  if (stop_.matched()) {
    f.reason = FinishInfo::Reason::kStopSequence;
    f.stop_sequence = *stop_.matched();
  } else if (backend_finish_ == FinishReason::kLength) {
    f.reason = FinishInfo::Reason::kLength;  // a reply cut short, whatever it holds
  } else if (num_tool_calls_ > 0) {
    f.reason = FinishInfo::Reason::kToolCalls;
  }
  return f;
}

bool ResponseDriver::Step(const Writer& write, std::chrono::milliseconds wait, std::chrono::milliseconds keep_alive) {
  if (finished_) return false;
  bool got = false;
  GenerationItem item = submission_.stream->Pull(wait, &got);
  std::string out;
  if (item.cached_tokens >= 0) cached_tokens_ = item.cached_tokens;
  if (got && !begun_) {
    begun_ = true;
    out += formatter_->Begin(submission_.prompt_tokens, cached_tokens_);
  }
  completion_tokens_ += item.num_tokens;
  if (!item.logprobs.empty()) formatter_->Logprobs(std::move(item.logprobs));
  // Push by push (the pieces cover the text), so that tokens are counted as
  // reasoning by the text they made.
  size_t offset = 0;
  for (const GenerationItem::Piece& piece : item.pieces) {
    bool reasoning_before = request_.is_chat() && parser_.in_reasoning();
    if (piece.bytes > 0) out += Process(std::string_view(item.text).substr(offset, piece.bytes));
    offset += piece.bytes;
    if (reasoning_before || (request_.is_chat() && parser_.in_reasoning())) reasoning_tokens_ += piece.tokens;
  }
  if (item.done) {
    finished_ = true;
    report_ = item.report;
    backend_finish_ = item.finish;
    if (item.finish == FinishReason::kError) {
      error_ = item.error.ok() ? Internal("generation failed") : item.error;
      out += formatter_->StreamError(item.error.message());
    } else {
      out += Flush();
      out += formatter_->Finish(MakeFinishInfo());
    }
  }
  auto now = std::chrono::steady_clock::now();
  if (out.empty() && begun_ && request_.stream && item.prefilled_tokens > reported_prefill_ &&
      item.prefilled_tokens < submission_.prompt_tokens && now - last_write_ >= kProgressInterval) {
    // A long prefill reports its progress as an SSE comment, which every
    // client ignores but a person watching the stream can read.
    reported_prefill_ = item.prefilled_tokens;
    out = ": prefill " + std::to_string(item.prefilled_tokens) + "/" + std::to_string(submission_.prompt_tokens) +
          " tokens\n\n";
  }
  if (out.empty() && begun_ && now - last_write_ >= keep_alive) out = formatter_->KeepAlive();
  if (!out.empty()) {
    last_write_ = now;
    if (!write(out)) {
      client_gone_ = true;
      finished_ = true;
      submission_.stream->Cancel();
      return false;
    }
  }
  return !finished_;
}

void ResponseDriver::Drain(std::chrono::milliseconds timeout) {
  submission_.stream->Cancel();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool got = false;
    GenerationItem item = submission_.stream->Pull(std::chrono::milliseconds(50), &got);
    if (item.done) {
      report_ = item.report;
      if (!finished_) backend_finish_ = item.finish;
      finished_ = true;
      return;
    }
  }
}

Status ResponseDriver::RunToEnd(std::string* body, const std::function<bool()>& client_gone) {
  std::string out;
  auto collect = [&](std::string_view s) {
    out.append(s);
    return true;
  };
  constexpr std::chrono::milliseconds kPollEvery{250};
  auto next_poll = std::chrono::steady_clock::now() + kPollEvery;
  while (Step(collect, kPollEvery, std::chrono::hours(24))) {
    if (!client_gone || std::chrono::steady_clock::now() < next_poll) continue;
    next_poll = std::chrono::steady_clock::now() + kPollEvery;
    if (client_gone()) {
      client_gone_ = true;
      finished_ = true;
      submission_.stream->Cancel();
      return IoError("the client closed the connection");
    }
  }
  if (backend_finish_ == FinishReason::kError) return error_;
  *body = std::move(out);
  return Status::Ok();
}

}  // namespace lineage::server
