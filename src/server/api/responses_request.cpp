#include "server/api/responses_request.h"

#include "server/api/json_fields.h"
#include "server/api/request_common.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

// A string, or an array of text parts (input_text, output_text, text,
// summary_text, reasoning_text), joined.
Status PartsText(const json& content, const std::string& path, std::string* out) {
  return JoinTextParts(content, path, {"input_text", "output_text", "text", "summary_text", "reasoning_text"}, out);
}

// Builds the message list item by item.
class InputItems {
 public:
  explicit InputItems(json* messages) : messages_(messages) {}

  void Finish() { FlushReasoning(); }

  Status Add(const json& item, const std::string& path) {
    std::string type = "message";
    LINEAGE_RETURN_IF_ERROR(GetString(item, "type", path, &type));
    if (type == "message") return AddMessage(item, path);
    if (type == "reasoning") return AddReasoning(item, path);
    if (type == "function_call") return AddFunctionCall(item, path);
    if (type == "function_call_output") return AddFunctionOutput(item, path);
    if (type == "item_reference")
      return InvalidArgument("'" + path + "': item references are not supported: this server keeps no items; "
                             "send the items themselves");
    return InvalidArgument("'" + path + ".type' has unknown value '" + type + "'");
  }

 private:
  Status AddMessage(const json& item, const std::string& path) {
    std::string role, text;
    LINEAGE_RETURN_IF_ERROR(GetString(item, "role", path, &role, true));
    if (!item.contains("content")) return InvalidArgument("missing required field '" + path + ".content'");
    LINEAGE_RETURN_IF_ERROR(PartsText(item.at("content"), path + ".content", &text));
    if (role == "developer") role = "system";
    if (role != "user" && role != "assistant" && role != "system")
      return InvalidArgument("'" + path + ".role' has unknown value '" + role + "'");
    json msg = {{"role", role}, {"content", text}};
    if (role == "assistant") TakeReasoning(&msg);
    else FlushReasoning();
    messages_->push_back(std::move(msg));
    return Status::Ok();
  }

  Status AddReasoning(const json& item, const std::string& path) {
    // The full text when the client kept it, else the summary.
    std::string text;
    if (Has(item, "content")) LINEAGE_RETURN_IF_ERROR(PartsText(item.at("content"), path + ".content", &text));
    if (text.empty() && Has(item, "summary"))
      LINEAGE_RETURN_IF_ERROR(PartsText(item.at("summary"), path + ".summary", &text));
    reasoning_ += text;
    return Status::Ok();
  }

  Status AddFunctionCall(const json& item, const std::string& path) {
    std::string call_id, name, arguments;
    LINEAGE_RETURN_IF_ERROR(GetString(item, "call_id", path, &call_id, true));
    LINEAGE_RETURN_IF_ERROR(GetString(item, "name", path, &name, true));
    LINEAGE_RETURN_IF_ERROR(GetString(item, "arguments", path, &arguments));
    json call = MakeToolCall(call_id, name, ArgumentsFromString(arguments));
    // One generated turn comes back as reasoning, message, function calls:
    // they render as the one assistant message they were generated as.
    if (messages_->empty() || messages_->back().value("role", "") != "assistant" || !reasoning_.empty()) {
      json msg = {{"role", "assistant"}, {"content", ""}};
      TakeReasoning(&msg);
      messages_->push_back(std::move(msg));
    }
    json& assistant = messages_->back();
    if (!assistant.contains("tool_calls")) assistant["tool_calls"] = json::array();
    assistant["tool_calls"].push_back(std::move(call));
    return Status::Ok();
  }

  Status AddFunctionOutput(const json& item, const std::string& path) {
    std::string call_id, output;
    LINEAGE_RETURN_IF_ERROR(GetString(item, "call_id", path, &call_id, true));
    if (!item.contains("output")) return InvalidArgument("missing required field '" + path + ".output'");
    LINEAGE_RETURN_IF_ERROR(PartsText(item.at("output"), path + ".output", &output));
    FlushReasoning();
    messages_->push_back({{"role", "tool"}, {"tool_call_id", call_id}, {"content", output}});
    return Status::Ok();
  }

  // Reasoning with nothing after it (a reply cut inside its thinking) was
  // an assistant turn of its own.
  void FlushReasoning() {
    if (reasoning_.empty()) return;
    json msg = {{"role", "assistant"}, {"content", ""}};
    TakeReasoning(&msg);
    messages_->push_back(std::move(msg));
  }

  void TakeReasoning(json* msg) {
    if (reasoning_.empty()) return;
    (*msg)["reasoning_content"] = reasoning_;
    reasoning_.clear();
  }

  json* messages_;
  std::string reasoning_;  // from reasoning items, for the next assistant message
};

Status ParseTools(const json& body, ApiRequest* req) {
  if (!Has(body, "tools")) return Status::Ok();
  return ForEachObject(body.at("tools"), "tools", [&](const json& t, const std::string& path) {
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(t, "type", path, &type, true));
    if (type != "function") return Status::Ok();  // hosted and custom tools: not run here
    return AddFunctionTool(t, path, req);
  });
}

Status ParseToolChoice(const json& body, ApiRequest* req) {
  if (!Has(body, "tool_choice")) return Status::Ok();
  const json& tc = body.at("tool_choice");
  if (tc.is_string()) return SetToolChoice(tc.get<std::string>(), req);
  if (!tc.is_object()) return TypeError("tool_choice", "a string or an object", tc);
  std::string type;
  LINEAGE_RETURN_IF_ERROR(GetString(tc, "type", "tool_choice", &type, true));
  if (type != "function") return Unsupported("'tool_choice.type' '" + type + "' is not supported (only 'function')");
  req->tool_choice = ToolChoice::kNamed;
  return GetString(tc, "name", "tool_choice", &req->tool_choice_name, true);
}

Status ParseOptions(const json& body, ApiRequest* req) {
  if (Has(body, "reasoning")) {
    const json& r = body.at("reasoning");
    if (!r.is_object()) return TypeError("reasoning", "an object", r);
    std::string effort;
    LINEAGE_RETURN_IF_ERROR(GetString(r, "effort", "reasoning", &effort));
    if (effort == "none" || effort == "minimal") req->template_kwargs["enable_thinking"] = false;
  }
  if (Has(body, "text")) {
    const json& t = body.at("text");
    if (!t.is_object()) return TypeError("text", "an object", t);
    if (Has(t, "format")) {
      LINEAGE_RETURN_IF_ERROR(ParseReplyFormat(t.at("format"), "text.format", req));
    }
  }
  bool background = false;
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "background", "", &background));
  if (background) return Unsupported("'background' responses are not supported");
  bool store = false;
  return GetBool(body, "store", "", &store);  // accepted: nothing is ever stored
}

}  // namespace

Result<ApiRequest> ParseOpenAiResponsesRequest(const std::string& body_text) {
  LINEAGE_ASSIGN_OR_RETURN(json body, ParseBodyObject(body_text));
  ApiRequest req;
  req.api = ApiKind::kOpenAiResponses;
  if (Has(body, "previous_response_id"))
    return InvalidArgument("'previous_response_id' is not supported: this server keeps no responses; send the whole "
                           "conversation in 'input' (as with store: false)");
  if (Has(body, "conversation"))
    return InvalidArgument("'conversation' is not supported: this server keeps no conversations; send the whole "
                           "conversation in 'input'");
  LINEAGE_RETURN_IF_ERROR(GetString(body, "model", "", &req.model));
  std::string instructions;
  LINEAGE_RETURN_IF_ERROR(GetString(body, "instructions", "", &instructions));
  if (Has(body, "instructions")) req.messages.push_back({{"role", "system"}, {"content", instructions}});
  if (!Has(body, "input")) return InvalidArgument("missing required field 'input'");
  const json& input = body.at("input");
  if (input.is_string()) {
    req.messages.push_back({{"role", "user"}, {"content", input.get<std::string>()}});
  } else {
    if (input.is_array() && input.empty()) return InvalidArgument("'input' must not be empty");
    InputItems items(&req.messages);
    LINEAGE_RETURN_IF_ERROR(ForEachObject(input, "input", [&](const json& item, const std::string& path) {
      return items.Add(item, path);
    }));
    items.Finish();
  }
  LINEAGE_RETURN_IF_ERROR(ParseTools(body, &req));
  LINEAGE_RETURN_IF_ERROR(ParseToolChoice(body, &req));
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "parallel_tool_calls", "", &req.parallel_tool_calls));
  LINEAGE_RETURN_IF_ERROR(ParseSampling(body, &req.sampling));
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "max_output_tokens", "", &req.sampling.max_tokens, 1, kMaxTokensLimit));
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "stream", "", &req.stream));
  LINEAGE_RETURN_IF_ERROR(ParseOptions(body, &req));
  return req;
}

}  // namespace lineage::server
