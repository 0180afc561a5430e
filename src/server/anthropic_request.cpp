#include "server/anthropic_request.h"

#include "server/json_fields.h"
#include "server/request_common.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Text of a string or of an array of {"type": "text", "text"} blocks.
Status TextOf(const json& v, const std::string& path, std::string* out) {
  out->clear();
  if (v.is_string()) {
    *out = v.get<std::string>();
    return Status::Ok();
  }
  if (!v.is_array()) return TypeError(path, "a string or an array of text blocks", v);
  for (size_t i = 0; i < v.size(); ++i) {
    const json& b = v[i];
    if (!b.is_object()) return TypeError(Idx(path, i), "an object", b);
    std::string type, text;
    LINEAGE_RETURN_IF_ERROR(GetString(b, "type", Idx(path, i), &type, true));
    if (type != "text") return Unsupported("'" + Idx(path, i) + "': blocks of type '" + type + "' are not supported here");
    LINEAGE_RETURN_IF_ERROR(GetString(b, "text", Idx(path, i), &text, true));
    *out += text;
  }
  return Status::Ok();
}

Status ParseUserTurn(const json& content, const std::string& path, json* out_messages) {
  if (content.is_string()) {
    out_messages->push_back({{"role", "user"}, {"content", content.get<std::string>()}});
    return Status::Ok();
  }
  if (!content.is_array()) return TypeError(path, "a string or an array of content blocks", content);
  std::string text;
  bool has_text = false;
  for (size_t i = 0; i < content.size(); ++i) {
    const json& b = content[i];
    std::string bpath = Idx(path, i);
    if (!b.is_object()) return TypeError(bpath, "an object", b);
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(b, "type", bpath, &type, true));
    if (type == "text") {
      std::string t;
      LINEAGE_RETURN_IF_ERROR(GetString(b, "text", bpath, &t, true));
      text += t;
      has_text = true;
    } else if (type == "tool_result") {
      std::string id, result;
      LINEAGE_RETURN_IF_ERROR(GetString(b, "tool_use_id", bpath, &id, true));
      if (Has(b, "content")) LINEAGE_RETURN_IF_ERROR(TextOf(b.at("content"), bpath + ".content", &result));
      out_messages->push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", result}});
    } else if (type == "image" || type == "document") {
      return Unsupported("'" + bpath + "': content blocks of type '" + type + "' are not supported");
    } else {
      return InvalidArgument("'" + bpath + ".type' has unknown value '" + type + "'");
    }
  }
  if (has_text) out_messages->push_back({{"role", "user"}, {"content", text}});
  return Status::Ok();
}

Status ParseAssistantTurn(const json& content, const std::string& path, json* out_messages) {
  json msg = {{"role", "assistant"}, {"content", ""}};
  if (content.is_string()) {
    msg["content"] = content.get<std::string>();
    out_messages->push_back(std::move(msg));
    return Status::Ok();
  }
  if (!content.is_array()) return TypeError(path, "a string or an array of content blocks", content);
  std::string text, reasoning;
  json calls = json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const json& b = content[i];
    std::string bpath = Idx(path, i);
    if (!b.is_object()) return TypeError(bpath, "an object", b);
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(b, "type", bpath, &type, true));
    if (type == "text") {
      std::string t;
      LINEAGE_RETURN_IF_ERROR(GetString(b, "text", bpath, &t, true));
      text += t;
    } else if (type == "thinking") {
      std::string t;
      LINEAGE_RETURN_IF_ERROR(GetString(b, "thinking", bpath, &t, true));
      reasoning += t;
    } else if (type == "redacted_thinking") {
      // Opaque to this server; nothing to render.
    } else if (type == "tool_use") {
      std::string id, name;
      LINEAGE_RETURN_IF_ERROR(GetString(b, "id", bpath, &id, true));
      LINEAGE_RETURN_IF_ERROR(GetString(b, "name", bpath, &name, true));
      json input = json::object();
      if (Has(b, "input")) {
        input = b.at("input");
        if (!input.is_object()) return TypeError(bpath + ".input", "an object", input);
      }
      calls.push_back(MakeToolCall(id, name, std::move(input)));
    } else {
      return InvalidArgument("'" + bpath + ".type' has unknown value '" + type + "' for an assistant turn");
    }
  }
  msg["content"] = text;
  if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  out_messages->push_back(std::move(msg));
  return Status::Ok();
}

Status ParseTools(const json& body, ApiRequest* req) {
  if (!Has(body, "tools")) return Status::Ok();
  const json& tools = body.at("tools");
  if (!tools.is_array()) return TypeError("tools", "an array", tools);
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& t = tools[i];
    std::string path = Idx("tools", i);
    if (!t.is_object()) return TypeError(path, "an object", t);
    // Server tools (web search, code execution) carry a versioned type and no
    // schema; they run on Anthropic's side and have no meaning here.
    if (Has(t, "type") && t.at("type") != "custom" && !Has(t, "input_schema")) continue;
    std::string name, description;
    LINEAGE_RETURN_IF_ERROR(GetString(t, "name", path, &name, true));
    LINEAGE_RETURN_IF_ERROR(GetString(t, "description", path, &description));
    if (!Has(t, "input_schema")) return InvalidArgument("missing required field '" + path + ".input_schema'");
    const json& schema = t.at("input_schema");
    if (!schema.is_object()) return TypeError(path + ".input_schema", "an object", schema);
    req->tools.push_back(MakeTool(name, description, Has(t, "description"), schema));
  }
  return Status::Ok();
}

Status ParseToolChoice(const json& body, ApiRequest* req) {
  if (!Has(body, "tool_choice")) return Status::Ok();
  const json& tc = body.at("tool_choice");
  if (!tc.is_object()) return TypeError("tool_choice", "an object", tc);
  std::string type;
  LINEAGE_RETURN_IF_ERROR(GetString(tc, "type", "tool_choice", &type, true));
  if (type == "auto") req->tool_choice = ToolChoice::kAuto;
  else if (type == "none") req->tool_choice = ToolChoice::kNone;
  else if (type == "any") req->tool_choice = ToolChoice::kRequired;
  else if (type == "tool") {
    req->tool_choice = ToolChoice::kNamed;
    return GetString(tc, "name", "tool_choice", &req->tool_choice_name, true);
  } else {
    return InvalidArgument("'tool_choice.type' has unknown value '" + type + "'");
  }
  return Status::Ok();
}

}  // namespace

Result<ApiRequest> ParseAnthropicMessagesRequest(const std::string& body_text) {
  LINEAGE_ASSIGN_OR_RETURN(json body, ParseBodyObject(body_text));
  ApiRequest req;
  req.api = ApiKind::kAnthropicMessages;
  LINEAGE_RETURN_IF_ERROR(GetString(body, "model", "", &req.model));
  if (!Has(body, "max_tokens")) return InvalidArgument("missing required field 'max_tokens'");
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "max_tokens", "", &req.sampling.max_tokens, 1, kMaxTokensLimit));
  if (Has(body, "system")) {
    std::string system;
    LINEAGE_RETURN_IF_ERROR(TextOf(body.at("system"), "system", &system));
    req.messages.push_back({{"role", "system"}, {"content", system}});
  }
  if (!Has(body, "messages")) return InvalidArgument("missing required field 'messages'");
  const json& messages = body.at("messages");
  if (!messages.is_array()) return TypeError("messages", "an array", messages);
  if (messages.empty()) return InvalidArgument("'messages' must not be empty");
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    std::string path = Idx("messages", i);
    if (!m.is_object()) return TypeError(path, "an object", m);
    std::string role;
    LINEAGE_RETURN_IF_ERROR(GetString(m, "role", path, &role, true));
    if (!m.contains("content")) return InvalidArgument("missing required field '" + path + ".content'");
    if (role == "user") {
      LINEAGE_RETURN_IF_ERROR(ParseUserTurn(m.at("content"), path + ".content", &req.messages));
    } else if (role == "assistant") {
      LINEAGE_RETURN_IF_ERROR(ParseAssistantTurn(m.at("content"), path + ".content", &req.messages));
    } else {
      return InvalidArgument("'" + path + ".role' has unknown value '" + role + "' (expected user or assistant)");
    }
  }
  LINEAGE_RETURN_IF_ERROR(ParseTools(body, &req));
  LINEAGE_RETURN_IF_ERROR(ParseToolChoice(body, &req));
  LINEAGE_RETURN_IF_ERROR(ParseSampling(body, &req.sampling));
  LINEAGE_RETURN_IF_ERROR(GetStringList(body, "stop_sequences", "", &req.stop));
  LINEAGE_RETURN_IF_ERROR(GetBool(body, "stream", "", &req.stream));
  if (Has(body, "thinking")) {
    const json& th = body.at("thinking");
    if (!th.is_object()) return TypeError("thinking", "an object", th);
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(th, "type", "thinking", &type, true));
    if (type != "enabled" && type != "disabled" && type != "adaptive")
      return InvalidArgument("'thinking.type' has unknown value '" + type + "'");
    req.template_kwargs["enable_thinking"] = (type != "disabled");
  }
  return req;
}

}  // namespace lineage::server
