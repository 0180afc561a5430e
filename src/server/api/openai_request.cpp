#include "server/api/openai_request.h"

#include "server/api/json_fields.h"
#include "server/api/request_common.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

// OpenAI content: a string, null, or an array of parts {"type": "text", "text"}.
// Templates get the parts joined into one string.
Status ContentToString(const json& content, const std::string& path, std::string* out) {
  return JoinTextParts(content, path, {"text"}, out);
}

Status ParseToolCalls(const json& calls, const std::string& path, json* out) {
  *out = json::array();
  return ForEachObject(calls, path, [&](const json& c, const std::string& cpath) {
    std::string id, type = "function";
    LINEAGE_RETURN_IF_ERROR(GetString(c, "id", cpath, &id));
    LINEAGE_RETURN_IF_ERROR(GetString(c, "type", cpath, &type));
    if (type != "function") return InvalidArgument("'" + cpath + ".type' must be 'function'");
    if (!Has(c, "function")) return InvalidArgument("missing required field '" + cpath + ".function'");
    const json& f = c.at("function");
    if (!f.is_object()) return TypeError(cpath + ".function", "an object", f);
    std::string name;
    LINEAGE_RETURN_IF_ERROR(GetString(f, "name", cpath + ".function", &name, true));
    json arguments = json::object();
    if (Has(f, "arguments")) {
      const json& a = f.at("arguments");
      if (a.is_string()) {
        arguments = ArgumentsFromString(a.get<std::string>());
      } else if (a.is_object()) {
        arguments = a;
      } else {
        return TypeError(cpath + ".function.arguments", "a string", a);
      }
    }
    out->push_back(MakeToolCall(id, name, std::move(arguments)));
    return Status::Ok();
  });
}

Status ParseMessage(const json& m, const std::string& path, json* out) {
  std::string role;
  LINEAGE_RETURN_IF_ERROR(GetString(m, "role", path, &role, true));
  if (role == "developer") role = "system";
  if (role != "system" && role != "user" && role != "assistant" && role != "tool")
    return InvalidArgument("'" + path + ".role' has unknown value '" + role + "'");
  json msg = {{"role", role}};
  std::string content;
  if (m.contains("content")) {
    LINEAGE_RETURN_IF_ERROR(ContentToString(m.at("content"), path + ".content", &content));
  } else if (role != "assistant") {
    return InvalidArgument("missing required field '" + path + ".content'");
  }
  msg["content"] = content;
  if (role == "assistant") {
    if (Has(m, "tool_calls")) {
      json calls;
      LINEAGE_RETURN_IF_ERROR(ParseToolCalls(m.at("tool_calls"), path + ".tool_calls", &calls));
      if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    }
    std::string reasoning;
    LINEAGE_RETURN_IF_ERROR(GetString(m, "reasoning_content", path, &reasoning));
    if (Has(m, "reasoning_content")) msg["reasoning_content"] = reasoning;
  }
  if (role == "tool") {
    std::string id;
    LINEAGE_RETURN_IF_ERROR(GetString(m, "tool_call_id", path, &id));
    if (!id.empty()) msg["tool_call_id"] = id;
  }
  std::string name;
  LINEAGE_RETURN_IF_ERROR(GetString(m, "name", path, &name));
  if (!name.empty()) msg["name"] = name;
  *out = std::move(msg);
  return Status::Ok();
}

Status ParseTools(const json& body, ApiRequest* req) {
  if (!Has(body, "tools")) return Status::Ok();
  return ForEachObject(body.at("tools"), "tools", [&](const json& t, const std::string& path) {
    std::string type = "function";
    LINEAGE_RETURN_IF_ERROR(GetString(t, "type", path, &type));
    if (type != "function") return InvalidArgument("'" + path + ".type' must be 'function'");
    if (!Has(t, "function")) return InvalidArgument("missing required field '" + path + ".function'");
    const json& f = t.at("function");
    if (!f.is_object()) return TypeError(path + ".function", "an object", f);
    return AddFunctionTool(f, path + ".function", req);
  });
}

Status ParseToolChoice(const json& body, ApiRequest* req) {
  if (!Has(body, "tool_choice")) return Status::Ok();
  const json& tc = body.at("tool_choice");
  if (tc.is_string()) return SetToolChoice(tc.get<std::string>(), req);
  if (!tc.is_object()) return TypeError("tool_choice", "a string or an object", tc);
  if (!Has(tc, "function") || !tc.at("function").is_object())
    return InvalidArgument("'tool_choice' object needs a 'function' object");
  req->tool_choice = ToolChoice::kNamed;
  return GetString(tc.at("function"), "name", "tool_choice.function", &req->tool_choice_name, true);
}

// Fields shared by both OpenAI endpoints.
Status ParseSamplingAndStream(const json& body, ApiRequest* req) {
  LINEAGE_RETURN_IF_ERROR(GetString(body, "model", "", &req->model));
  LINEAGE_RETURN_IF_ERROR(ParseSampling(body, &req->sampling));
  int64_t max_tokens = req->sampling.max_tokens;
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "max_tokens", "", &max_tokens, 1, kMaxTokensLimit));
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "max_completion_tokens", "", &max_tokens, 1, kMaxTokensLimit));
  req->sampling.max_tokens = max_tokens;
  LINEAGE_RETURN_IF_ERROR(ParseLogitAdjustments(body, &req->sampling));
  if (Has(body, "response_format")) LINEAGE_RETURN_IF_ERROR(ParseReplyFormat(body.at("response_format"), "response_format", req));
  LINEAGE_RETURN_IF_ERROR(GetStringList(body, "stop", "", &req->stop));
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "stream", "", &req->stream));
  if (Has(body, "stream_options")) {
    const json& so = body.at("stream_options");
    if (!so.is_object()) return TypeError("stream_options", "an object", so);
    LINEAGE_RETURN_IF_ERROR(GetBool(so, "include_usage", "stream_options", &req->include_usage));
  }
  // Chat: logprobs true, with top_logprobs alternatives (0..20); the legacy
  // completions: logprobs N (0..5) alternatives, null or absent for none.
  auto given = [&](const char* key) { return Has(body, key) && !body.at(key).is_null(); };
  if (req->is_chat()) {
    bool logprobs = false;
    if (given("logprobs")) LINEAGE_RETURN_IF_ERROR(GetBool(body, "logprobs", "", &logprobs));
    int64_t top = 0;
    if (given("top_logprobs")) LINEAGE_RETURN_IF_ERROR(GetInt(body, "top_logprobs", "", &top, 0, 20));
    if (given("top_logprobs") && !logprobs) return InvalidArgument("'top_logprobs' needs 'logprobs': true");
    if (logprobs) req->sampling.top_logprobs = static_cast<int32_t>(top);
  } else if (given("logprobs")) {
    int64_t top = 0;
    LINEAGE_RETURN_IF_ERROR(GetInt(body, "logprobs", "", &top, 0, 5));
    req->sampling.top_logprobs = static_cast<int32_t>(top);
  }
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "n", "", &req->n, 1, ApiRequest::kMaxChoices));
  return Status::Ok();
}

}  // namespace

Result<ApiRequest> ParseOpenAiChatRequest(const std::string& body_text) {
  LINEAGE_ASSIGN_OR_RETURN(json body, ParseBodyObject(body_text));
  ApiRequest req;
  req.api = ApiKind::kOpenAiChat;
  if (!Has(body, "messages")) return InvalidArgument("missing required field 'messages'");
  const json& messages = body.at("messages");
  if (messages.is_array() && messages.empty()) return InvalidArgument("'messages' must not be empty");
  LINEAGE_RETURN_IF_ERROR(ForEachObject(messages, "messages", [&](const json& m, const std::string& path) {
    json msg;
    LINEAGE_RETURN_IF_ERROR(ParseMessage(m, path, &msg));
    req.messages.push_back(std::move(msg));
    return Status::Ok();
  }));
  LINEAGE_RETURN_IF_ERROR(ParseTools(body, &req));
  LINEAGE_RETURN_IF_ERROR(ParseToolChoice(body, &req));
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "parallel_tool_calls", "", &req.parallel_tool_calls));
  LINEAGE_RETURN_IF_ERROR(ParseSamplingAndStream(body, &req));
  if (Has(body, "chat_template_kwargs")) {
    const json& kw = body.at("chat_template_kwargs");
    if (!kw.is_object()) return TypeError("chat_template_kwargs", "an object", kw);
    req.template_kwargs = kw;
  }
  return req;
}

Result<ApiRequest> ParseOpenAiCompletionRequest(const std::string& body_text) {
  LINEAGE_ASSIGN_OR_RETURN(json body, ParseBodyObject(body_text));
  ApiRequest req;
  req.api = ApiKind::kOpenAiCompletion;
  req.sampling.max_tokens = 16;  // OpenAI's documented default for this endpoint
  if (!Has(body, "prompt")) return InvalidArgument("missing required field 'prompt'");
  const json& prompt = body.at("prompt");
  if (prompt.is_string()) {
    req.prompt = prompt.get<std::string>();
  } else if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) {
    req.prompt = prompt[0].get<std::string>();
  } else if (prompt.is_array()) {
    return Unsupported("'prompt' must be one string; batches and token arrays are not supported");
  } else {
    return TypeError("prompt", "a string", prompt);
  }
  bool echo = false;
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "echo", "", &echo));
  if (echo) return Unsupported("'echo' is not supported");
  LINEAGE_RETURN_IF_ERROR(ParseSamplingAndStream(body, &req));
  return req;
}

}  // namespace lineage::server
