// OpenAI Responses API responses (POST /v1/responses): one response object,
// or the event stream
//   response.created, response.in_progress,
//   per output item: response.output_item.added, then
//     reasoning:      response.reasoning_text.delta*, response.reasoning_text.done
//     message:        response.content_part.added, response.output_text.delta*,
//                     response.output_text.done, response.content_part.done
//     function_call:  response.function_call_arguments.delta,
//                     response.function_call_arguments.done
//   and response.output_item.done;
//   response.completed, or response.incomplete when max_output_tokens (or
//   the server's --n-predict, or the context) cut the reply.
// Every event carries a sequence_number. Usage reports the restore length as
// input_tokens_details.cached_tokens. Nothing is stored: store is false.
#include <ctime>

#include "server/replies/response_format.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

class ResponsesFormatter : public ResponseFormatter {
 public:
  ResponsesFormatter(const ApiRequest& req, const std::string& model)
      : stream_(req.stream),
        model_(req.model.empty() ? model : req.model),
        id_(RandomId("resp_")),
        created_(static_cast<int64_t>(std::time(nullptr))),
        max_output_tokens_(req.sampling.max_tokens),
        parallel_tool_calls_(req.parallel_tool_calls),
        temperature_(req.sampling.temperature),
        top_p_(req.sampling.top_p),
        text_format_(FormatOf(req)) {}

  static json FormatOf(const ApiRequest& req) {
    switch (req.reply_format) {
      case ReplyFormat::kText: return {{"type", "text"}};
      case ReplyFormat::kJsonObject: return {{"type", "json_object"}};
      case ReplyFormat::kJsonSchema: return {{"type", "json_schema"}, {"schema", req.reply_schema}};
    }
    return {{"type", "text"}};
  }

  std::string Begin(int64_t, int64_t) override {
    if (!stream_) return "";
    json r = Response("in_progress");
    std::string out = Emit("response.created", {{"response", r}});  // sequence numbers: one statement each
    return out + Emit("response.in_progress", {{"response", r}});
  }

  std::string Event(const OutputEvent& e) override {
    std::string out;
    switch (e.kind) {
      case OutputEvent::Kind::kReasoning:
        out += Open(Item::kReasoning);
        open_text_ += e.text;
        if (stream_) out += Emit("response.reasoning_text.delta", Where({{"content_index", 0}, {"delta", e.text}}));
        break;
      case OutputEvent::Kind::kContent:
        out += Open(Item::kMessage);
        open_text_ += e.text;
        if (stream_)
          out += Emit("response.output_text.delta",
                      Where({{"content_index", 0}, {"delta", e.text}, {"logprobs", json::array()}}));
        break;
      case OutputEvent::Kind::kToolCall: {
        out += Close();
        json item = {{"id", RandomId("fc_")}, {"type", "function_call"}, {"status", "in_progress"},
                     {"call_id", RandomId("call_")}, {"name", e.call.name}, {"arguments", ""}};
        std::string arguments = Dump(e.call.arguments);
        open_ = Item::kFunctionCall;
        open_item_ = item;
        if (stream_) {
          out += Emit("response.output_item.added", {{"output_index", output_.size()}, {"item", item}});
          out += Emit("response.function_call_arguments.delta", Where({{"delta", arguments}}));
          out += Emit("response.function_call_arguments.done", Where({{"arguments", arguments}}));
        }
        open_text_ = arguments;
        out += Close();
        break;
      }
    }
    return out;
  }

  std::string Finish(const FinishInfo& f) override {
    std::string out = Close();
    bool incomplete = f.reason == FinishInfo::Reason::kLength;
    json r = Response(incomplete ? "incomplete" : "completed");
    if (incomplete) r["incomplete_details"] = {{"reason", "max_output_tokens"}};
    r["output"] = output_;
    r["usage"] = {{"input_tokens", f.prompt_tokens},
                  {"input_tokens_details", {{"cached_tokens", f.cached_tokens}}},
                  {"output_tokens", f.completion_tokens},
                  {"output_tokens_details", {{"reasoning_tokens", f.reasoning_tokens}}},
                  {"total_tokens", f.prompt_tokens + f.completion_tokens}};
    if (!stream_) return Dump(r);
    return out + Emit(incomplete ? "response.incomplete" : "response.completed", {{"response", r}});
  }

  std::string KeepAlive() override { return stream_ ? ": keep-alive\n\n" : ""; }

  std::string StreamError(const std::string& message) override {
    json r = Response("failed");
    r["error"] = {{"code", "server_error"}, {"message", message}};
    r["output"] = output_;
    std::string out = Emit("error", {{"code", "server_error"}, {"message", message}, {"param", nullptr}});
    return out + Emit("response.failed", {{"response", r}});
  }

 private:
  enum class Item { kNone, kReasoning, kMessage, kFunctionCall };

  json Response(const char* status) const {
    return {{"id", id_},
            {"object", "response"},
            {"created_at", created_},
            {"status", status},
            {"error", nullptr},
            {"incomplete_details", nullptr},
            {"instructions", nullptr},
            {"max_output_tokens", max_output_tokens_ > 0 ? json(max_output_tokens_) : json(nullptr)},
            {"model", model_},
            {"output", json::array()},
            {"parallel_tool_calls", parallel_tool_calls_},
            {"previous_response_id", nullptr},
            {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
            {"store", false},
            {"temperature", temperature_},
            {"text", {{"format", text_format_}}},
            {"tool_choice", "auto"},
            {"tools", json::array()},
            {"top_p", top_p_},
            {"truncation", "disabled"},
            {"usage", nullptr},
            {"metadata", json::object()}};
  }

  std::string Emit(const char* type, json fields) {
    json event = {{"type", type}, {"sequence_number", sequence_++}};
    for (auto it = fields.begin(); it != fields.end(); ++it) event[it.key()] = std::move(*it);
    return SseEvent(event, type);
  }

  // item_id and output_index of the open item, then `fields`.
  json Where(json fields) const {
    json out = {{"item_id", open_item_["id"]}, {"output_index", output_.size()}};
    for (auto it = fields.begin(); it != fields.end(); ++it) out[it.key()] = std::move(*it);
    return out;
  }

  std::string Open(Item kind) {
    if (open_ == kind) return "";
    std::string out = Close();
    open_ = kind;
    open_text_.clear();
    if (kind == Item::kReasoning) {
      open_item_ = {{"id", RandomId("rs_")}, {"type", "reasoning"}, {"summary", json::array()}};
    } else {
      open_item_ = {{"id", RandomId("msg_")}, {"type", "message"}, {"status", "in_progress"},
                    {"role", "assistant"}, {"content", json::array()}};
    }
    if (!stream_) return out;
    out += Emit("response.output_item.added", {{"output_index", output_.size()}, {"item", open_item_}});
    if (kind == Item::kMessage)
      out += Emit("response.content_part.added", Where({{"content_index", 0}, {"part", TextPart("")}}));
    return out;
  }

  static json TextPart(const std::string& text) {
    return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}, {"logprobs", json::array()}};
  }

  std::string Close() {
    if (open_ == Item::kNone) return "";
    std::string out;
    json item = open_item_;
    switch (open_) {
      case Item::kReasoning:
        item["content"] = json::array({{{"type", "reasoning_text"}, {"text", open_text_}}});
        if (stream_) out += Emit("response.reasoning_text.done", Where({{"content_index", 0}, {"text", open_text_}}));
        break;
      case Item::kMessage:
        item["status"] = "completed";
        item["content"] = json::array({TextPart(open_text_)});
        if (stream_) {
          out += Emit("response.output_text.done",
                      Where({{"content_index", 0}, {"text", open_text_}, {"logprobs", json::array()}}));
          out += Emit("response.content_part.done", Where({{"content_index", 0}, {"part", TextPart(open_text_)}}));
        }
        break;
      case Item::kFunctionCall:
        item["status"] = "completed";
        item["arguments"] = open_text_;
        break;
      case Item::kNone: break;
    }
    if (stream_) out += Emit("response.output_item.done", {{"output_index", output_.size()}, {"item", item}});
    output_.push_back(std::move(item));
    open_ = Item::kNone;
    open_text_.clear();
    return out;
  }

  bool stream_;
  std::string model_, id_;
  int64_t created_;
  int64_t max_output_tokens_;
  bool parallel_tool_calls_;
  float temperature_, top_p_;
  json text_format_;
  int64_t sequence_ = 0;
  Item open_ = Item::kNone;
  json open_item_;
  std::string open_text_;
  json output_ = json::array();
};

}  // namespace

std::unique_ptr<ResponseFormatter> MakeResponsesFormatter(const ApiRequest& request, const std::string& model) {
  return std::make_unique<ResponsesFormatter>(request, model);
}

}  // namespace lineage::server
