// OpenAI responses: chat.completion / chat.completion.chunk and
// text_completion, with usage.prompt_tokens_details.cached_tokens set to the
// restore length.
#include <ctime>

#include "server/replies/response_format.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

const char* FinishReasonName(FinishInfo::Reason r) {
  switch (r) {
    case FinishInfo::Reason::kLength: return "length";
    case FinishInfo::Reason::kToolCalls: return "tool_calls";
    default: return "stop";
  }
}

json Usage(const FinishInfo& f) {
  return {{"prompt_tokens", f.prompt_tokens},
          {"completion_tokens", f.completion_tokens},
          {"total_tokens", f.prompt_tokens + f.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", f.cached_tokens}}},
          {"completion_tokens_details", {{"reasoning_tokens", f.reasoning_tokens}}}};
}

class OpenAiFormatter : public ResponseFormatter {
 public:
  OpenAiFormatter(const ApiRequest& req, const std::string& model)
      : chat_(req.is_chat()),
        stream_(req.stream),
        include_usage_(req.include_usage),
        model_(req.model.empty() ? model : req.model),
        id_(RandomId(chat_ ? "chatcmpl-" : "cmpl-")),
        created_(static_cast<int64_t>(std::time(nullptr))) {}

  std::string Begin(int64_t, int64_t) override {
    if (!stream_ || !chat_) return "";
    return Chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
  }

  std::string Event(const OutputEvent& e) override {
    if (!stream_) {
      Accumulate(e);
      return "";
    }
    if (!chat_) return Chunk(e.text, nullptr);
    switch (e.kind) {
      case OutputEvent::Kind::kContent: return Chunk({{"content", e.text}}, nullptr);
      case OutputEvent::Kind::kReasoning: return Chunk({{"reasoning_content", e.text}}, nullptr);
      case OutputEvent::Kind::kToolCall: {
        json call = ToolCallJson(e.call);
        call["index"] = num_tool_calls_++;
        return Chunk({{"tool_calls", json::array({call})}}, nullptr);
      }
    }
    return "";
  }

  std::string Finish(const FinishInfo& f) override {
    if (!stream_) return Dump(Whole(f));
    std::string out = chat_ ? Chunk(json::object(), FinishReasonName(f.reason)) : Chunk("", FinishReasonName(f.reason));
    if (include_usage_) {
      json last = Envelope();
      last["choices"] = json::array();
      last["usage"] = Usage(f);
      out += SseEvent(last);
    }
    out += "data: [DONE]\n\n";
    return out;
  }

  std::string KeepAlive() override { return stream_ ? ": keep-alive\n\n" : ""; }

  std::string StreamError(const std::string& message) override {
    return SseEvent({{"error", {{"message", message}, {"type", "server_error"}, {"param", nullptr}, {"code", nullptr}}}}) +
           "data: [DONE]\n\n";
  }

 private:
  json Envelope() const {
    json j = {{"id", id_}, {"object", chat_ ? (stream_ ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
              {"created", created_}, {"model", model_}};
    if (stream_ && include_usage_) j["usage"] = nullptr;
    return j;
  }

  // delta is an object for chat, the text for completions.
  std::string Chunk(const json& delta, const char* finish_reason) {
    json j = Envelope();
    json choice = {{"index", 0}};
    if (chat_) choice["delta"] = delta;
    else choice["text"] = delta;
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = finish_reason ? json(finish_reason) : json(nullptr);
    j["choices"] = json::array({choice});
    return SseEvent(j);
  }

  static json ToolCallJson(const ToolCall& c) {
    return {{"id", RandomId("call_")}, {"type", "function"},
            {"function", {{"name", c.name}, {"arguments", Dump(c.arguments)}}}};
  }

  void Accumulate(const OutputEvent& e) {
    if (e.kind == OutputEvent::Kind::kContent) content_ += e.text;
    else if (e.kind == OutputEvent::Kind::kReasoning) reasoning_ += e.text;
    else tool_calls_.push_back(ToolCallJson(e.call));
  }

  json Whole(const FinishInfo& f) const {
    json j = Envelope();
    json choice = {{"index", 0}};
    if (chat_) {
      json msg = {{"role", "assistant"}};
      msg["content"] = content_.empty() && !tool_calls_.empty() ? json(nullptr) : json(content_);
      if (!reasoning_.empty()) msg["reasoning_content"] = reasoning_;
      if (!tool_calls_.empty()) msg["tool_calls"] = tool_calls_;
      choice["message"] = msg;
    } else {
      choice["text"] = content_;
    }
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = FinishReasonName(f.reason);
    j["choices"] = json::array({choice});
    j["usage"] = Usage(f);
    j["timings"] = {{"prompt_n", f.prompt_tokens}, {"cache_n", f.cached_tokens}, {"predicted_n", f.completion_tokens},
                    {"restore", f.restore}, {"admission_ms", f.admission_ms}, {"prefill_ms", f.prefill_ms},
                    {"commit_ms", f.commit_ms}, {"ttft_ms", f.ttft_ms}, {"total_ms", f.total_ms}};
    return j;
  }

  bool chat_, stream_, include_usage_;
  std::string model_, id_;
  int64_t created_;
  int num_tool_calls_ = 0;
  std::string content_, reasoning_;
  json tool_calls_ = json::array();
};

}  // namespace

std::unique_ptr<ResponseFormatter> MakeOpenAiFormatter(const ApiRequest& request, const std::string& model) {
  if (request.api == ApiKind::kOpenAiResponses) return MakeResponsesFormatter(request, model);
  return std::make_unique<OpenAiFormatter>(request, model);
}

}  // namespace lineage::server
