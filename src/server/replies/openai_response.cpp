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
  OpenAiFormatter(const ApiRequest& req, const std::string& model, const OpenAiChoice& choice)
      : chat_(req.is_chat()),
        stream_(req.stream),
        include_usage_(req.include_usage),
        index_(choice.index),
        last_(choice.count <= 1),
        model_(req.model.empty() ? model : req.model),
        id_(choice.id.empty() ? NewOpenAiId(req) : choice.id),
        created_(choice.created > 0 ? choice.created : static_cast<int64_t>(std::time(nullptr))) {}

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
    if (last_) out += End(f);
    return out;
  }

  // After the last choice: the usage chunk when asked for, then [DONE].
  std::string End(const FinishInfo& total) const {
    std::string out;
    if (include_usage_) {
      json last = Envelope();
      last["choices"] = json::array();
      last["usage"] = Usage(total);
      out += SseEvent(last);
    }
    return out + "data: [DONE]\n\n";
  }

  void Logprobs(std::vector<TokenLogprob> tokens) override {
    for (TokenLogprob& t : tokens) pending_.push_back(std::move(t));
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

  // OpenAI's logprobs of `tokens`: chat {"content": [{token, logprob, bytes,
  // top_logprobs}]}; completions {tokens, token_logprobs, top_logprobs,
  // text_offset}, offsets from `offset` in the reply's text. Null for none.
  json LogprobsJson(const std::vector<TokenLogprob>& tokens, int64_t offset) const {
    if (tokens.empty()) return nullptr;
    auto bytes = [](const std::string& b) {
      json a = json::array();
      for (unsigned char c : b) a.push_back(static_cast<int>(c));
      return a;
    };
    if (chat_) {
      json content = json::array();
      for (const TokenLogprob& t : tokens) {
        json top = json::array();
        for (const TokenLogprob::Candidate& c : t.top)
          top.push_back({{"token", c.bytes}, {"logprob", c.logprob}, {"bytes", bytes(c.bytes)}});
        content.push_back({{"token", t.token.bytes}, {"logprob", t.token.logprob}, {"bytes", bytes(t.token.bytes)},
                           {"top_logprobs", top}});
      }
      return {{"content", content}, {"refusal", nullptr}};
    }
    json toks = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
    for (const TokenLogprob& t : tokens) {
      toks.push_back(t.token.bytes);
      lps.push_back(t.token.logprob);
      json top = json::object();
      for (const TokenLogprob::Candidate& c : t.top) top[c.bytes] = c.logprob;
      tops.push_back(top);
      offsets.push_back(offset);
      offset += static_cast<int64_t>(t.token.bytes.size());
    }
    return {{"tokens", toks}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
  }

  // delta is an object for chat, the text for completions. Carries the
  // logprobs pending (tokens whose text this chunk or an earlier one sent,
  // or that a stop string holds back).
  std::string Chunk(const json& delta, const char* finish_reason) {
    json j = Envelope();
    json choice = {{"index", index_}};
    if (chat_) choice["delta"] = delta;
    else choice["text"] = delta;
    choice["logprobs"] = LogprobsJson(pending_, streamed_bytes_);
    for (const TokenLogprob& t : pending_) streamed_bytes_ += static_cast<int64_t>(t.token.bytes.size());
    pending_.clear();
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
    json choice = {{"index", index_}};
    if (chat_) {
      json msg = {{"role", "assistant"}};
      msg["content"] = content_.empty() && !tool_calls_.empty() ? json(nullptr) : json(content_);
      if (!reasoning_.empty()) msg["reasoning_content"] = reasoning_;
      if (!tool_calls_.empty()) msg["tool_calls"] = tool_calls_;
      choice["message"] = msg;
    } else {
      choice["text"] = content_;
    }
    choice["logprobs"] = LogprobsJson(KeptLogprobs(f), 0);
    choice["finish_reason"] = FinishReasonName(f.reason);
    j["choices"] = json::array({choice});
    j["usage"] = Usage(f);
    j["timings"] = {{"prompt_n", f.prompt_tokens}, {"cache_n", f.cached_tokens}, {"predicted_n", f.completion_tokens},
                    {"restore", f.restore}, {"admission_ms", f.admission_ms}, {"prefill_ms", f.prefill_ms},
                    {"commit_ms", f.commit_ms}, {"ttft_ms", f.ttft_ms}, {"total_ms", f.total_ms}};
    return j;
  }

  // The tokens a whole completion reply reports: all, or where a stop
  // string cut the text, those that start before the cut.
  std::vector<TokenLogprob> KeptLogprobs(const FinishInfo& f) const {
    if (chat_ || f.reason != FinishInfo::Reason::kStopSequence) return pending_;
    std::vector<TokenLogprob> kept;
    int64_t offset = 0;
    for (const TokenLogprob& t : pending_) {
      if (offset >= static_cast<int64_t>(content_.size())) break;
      kept.push_back(t);
      offset += static_cast<int64_t>(t.token.bytes.size());
    }
    return kept;
  }

  bool chat_, stream_, include_usage_;
  int64_t index_;
  bool last_;  // the only choice: Finish ends the stream
  std::vector<TokenLogprob> pending_;  // not yet in a chunk (all of them, not streaming)
  int64_t streamed_bytes_ = 0;         // text offset of the next streamed completion token
  std::string model_, id_;
  int64_t created_;
  int num_tool_calls_ = 0;
  std::string content_, reasoning_;
  json tool_calls_ = json::array();
};

}  // namespace

std::unique_ptr<ResponseFormatter> MakeOpenAiFormatter(const ApiRequest& request, const std::string& model,
                                                       const OpenAiChoice& choice) {
  if (request.api == ApiKind::kOpenAiResponses) return MakeResponsesFormatter(request, model);
  return std::make_unique<OpenAiFormatter>(request, model, choice);
}

std::string NewOpenAiId(const ApiRequest& request) { return RandomId(request.is_chat() ? "chatcmpl-" : "cmpl-"); }

std::string OpenAiStreamEnd(const ApiRequest& request, const std::string& model, const OpenAiChoice& choice,
                            const FinishInfo& total) {
  return OpenAiFormatter(request, model, choice).End(total);
}

Result<std::string> MergeOpenAiChoices(const std::vector<std::string>& bodies) {
  if (bodies.empty()) return Internal("no choices to merge");
  json merged;
  int64_t completion = 0, reasoning = 0;
  for (const std::string& b : bodies) {
    json j = json::parse(b, nullptr, false);
    if (j.is_discarded() || !j.contains("choices")) return Internal("a choice's reply is not a completion");
    if (merged.is_null()) {
      merged = j;
      merged["choices"] = json::array();
    }
    for (json& c : j["choices"]) merged["choices"].push_back(std::move(c));
    completion += j["usage"]["completion_tokens"].get<int64_t>();
    reasoning += j["usage"]["completion_tokens_details"]["reasoning_tokens"].get<int64_t>();
  }
  json& usage = merged["usage"];
  usage["completion_tokens"] = completion;
  usage["completion_tokens_details"]["reasoning_tokens"] = reasoning;
  usage["total_tokens"] = usage["prompt_tokens"].get<int64_t>() + completion;
  return Dump(merged);
}

}  // namespace lineage::server
