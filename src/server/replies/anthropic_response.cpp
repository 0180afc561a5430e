// Anthropic /v1/messages responses: one message object, or the event stream
//   message_start, ping, (content_block_start, content_block_delta*,
//   content_block_stop)*, message_delta, message_stop.
// Usage follows Anthropic's accounting: input_tokens excludes the tokens
// served from the cache, which are cache_read_input_tokens (the restore
// length), so input_tokens + cache_read_input_tokens is the prompt length.
#include "server/replies/response_format.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

const char* StopReasonName(FinishInfo::Reason r) {
  switch (r) {
    case FinishInfo::Reason::kLength: return "max_tokens";
    case FinishInfo::Reason::kToolCalls: return "tool_use";
    case FinishInfo::Reason::kStopSequence: return "stop_sequence";
    default: return "end_turn";
  }
}

json Usage(int64_t prompt_tokens, int64_t cached_tokens, int64_t output_tokens) {
  return {{"input_tokens", prompt_tokens - cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", cached_tokens},
          {"output_tokens", output_tokens}};
}

class AnthropicFormatter : public ResponseFormatter {
 public:
  AnthropicFormatter(const ApiRequest& req, const std::string& model)
      : stream_(req.stream), model_(req.model.empty() ? model : req.model), id_(RandomId("msg_")) {}

  std::string Begin(int64_t prompt_tokens, int64_t cached_tokens) override {
    if (!stream_) return "";
    json msg = Message();
    msg["usage"] = Usage(prompt_tokens, cached_tokens, 0);
    return SseEvent({{"type", "message_start"}, {"message", msg}}, "message_start") +
           SseEvent({{"type", "ping"}}, "ping");
  }

  std::string Event(const OutputEvent& e) override {
    if (!stream_) {
      Accumulate(e);
      return "";
    }
    std::string out;
    switch (e.kind) {
      case OutputEvent::Kind::kContent:
        out += OpenBlock(Block::kText, {{"type", "text"}, {"text", ""}});
        out += Delta({{"type", "text_delta"}, {"text", e.text}});
        break;
      case OutputEvent::Kind::kReasoning:
        out += OpenBlock(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
        out += Delta({{"type", "thinking_delta"}, {"thinking", e.text}});
        break;
      case OutputEvent::Kind::kToolCall:
        out += CloseBlock();
        out += OpenBlock(Block::kToolUse,
                         {{"type", "tool_use"}, {"id", RandomId("toolu_")}, {"name", e.call.name}, {"input", json::object()}});
        out += Delta({{"type", "input_json_delta"}, {"partial_json", Dump(e.call.arguments)}});
        out += CloseBlock();
        break;
    }
    return out;
  }

  std::string Finish(const FinishInfo& f) override {
    if (!stream_) {
      json msg = Message();
      msg["content"] = content_;
      msg["stop_reason"] = StopReasonName(f.reason);
      msg["stop_sequence"] = f.reason == FinishInfo::Reason::kStopSequence ? json(f.stop_sequence) : json(nullptr);
      msg["usage"] = Usage(f.prompt_tokens, f.cached_tokens, f.completion_tokens);
      return Dump(msg);
    }
    std::string out = CloseBlock();
    json delta = {{"stop_reason", StopReasonName(f.reason)},
                  {"stop_sequence", f.reason == FinishInfo::Reason::kStopSequence ? json(f.stop_sequence) : json(nullptr)}};
    out += SseEvent({{"type", "message_delta"}, {"delta", delta},
                     {"usage", Usage(f.prompt_tokens, f.cached_tokens, f.completion_tokens)}},
                    "message_delta");
    out += SseEvent({{"type", "message_stop"}}, "message_stop");
    return out;
  }

  std::string KeepAlive() override { return stream_ ? SseEvent({{"type", "ping"}}, "ping") : ""; }

  std::string StreamError(const std::string& message) override {
    return SseEvent({{"type", "error"}, {"error", {{"type", "api_error"}, {"message", message}}}}, "error");
  }

 private:
  enum class Block { kNone, kText, kThinking, kToolUse };

  json Message() const {
    return {{"id", id_}, {"type", "message"}, {"role", "assistant"}, {"model", model_},
            {"content", json::array()}, {"stop_reason", nullptr}, {"stop_sequence", nullptr}};
  }

  std::string OpenBlock(Block kind, const json& content_block) {
    if (open_ == kind && kind != Block::kToolUse) return "";
    std::string out = CloseBlock();
    open_ = kind;
    out += SseEvent({{"type", "content_block_start"}, {"index", index_}, {"content_block", content_block}},
                    "content_block_start");
    return out;
  }

  std::string Delta(const json& delta) {
    return SseEvent({{"type", "content_block_delta"}, {"index", index_}, {"delta", delta}}, "content_block_delta");
  }

  std::string CloseBlock() {
    if (open_ == Block::kNone) return "";
    open_ = Block::kNone;
    return SseEvent({{"type", "content_block_stop"}, {"index", index_++}}, "content_block_stop");
  }

  void Accumulate(const OutputEvent& e) {
    const char* type = e.kind == OutputEvent::Kind::kContent ? "text" : "thinking";
    const char* field = e.kind == OutputEvent::Kind::kContent ? "text" : "thinking";
    if (e.kind == OutputEvent::Kind::kToolCall) {
      content_.push_back({{"type", "tool_use"}, {"id", RandomId("toolu_")}, {"name", e.call.name}, {"input", e.call.arguments}});
      return;
    }
    if (!content_.empty() && content_.back()["type"] == type) {
      content_.back()[field] = content_.back()[field].get<std::string>() + e.text;
      return;
    }
    json block = {{"type", type}, {field, e.text}};
    if (e.kind == OutputEvent::Kind::kReasoning) block["signature"] = "";
    content_.push_back(std::move(block));
  }

  bool stream_;
  std::string model_, id_;
  Block open_ = Block::kNone;
  int index_ = 0;
  json content_ = json::array();
};

}  // namespace

std::unique_ptr<ResponseFormatter> MakeAnthropicFormatter(const ApiRequest& request, const std::string& model) {
  return std::make_unique<AnthropicFormatter>(request, model);
}

}  // namespace lineage::server
