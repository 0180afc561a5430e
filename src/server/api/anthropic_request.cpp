#include "server/api/anthropic_request.h"

#include <string_view>

#include "server/api/json_fields.h"
#include "server/api/request_common.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

// Calls fn(type, block, block_path) for each content block of `blocks`.
Status ForEachBlock(const json& blocks, const std::string& path,
                    const std::function<Status(const std::string&, const json&, const std::string&)>& fn) {
  return ForEachObject(blocks, path, [&](const json& b, const std::string& bpath) {
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(b, "type", bpath, &type, true));
    return fn(type, b, bpath);
  });
}

// Appends b[key] (a required string) to *out.
Status AppendText(const json& b, const char* key, const std::string& bpath, std::string* out) {
  std::string t;
  LINEAGE_RETURN_IF_ERROR(GetString(b, key, bpath, &t, true));
  out->append(t);
  return Status::Ok();
}

// Text of a string or of an array of {"type": "text", "text"} blocks.
Status TextOf(const json& v, const std::string& path, std::string* out) {
  out->clear();
  if (v.is_string()) {
    *out = v.get<std::string>();
    return Status::Ok();
  }
  if (!v.is_array()) return TypeError(path, "a string or an array of text blocks", v);
  return ForEachBlock(v, path, [&](const std::string& type, const json& b, const std::string& bpath) {
    if (type != "text") return Unsupported("'" + bpath + "': blocks of type '" + type + "' are not supported here");
    return AppendText(b, "text", bpath, out);
  });
}

constexpr std::string_view kBillingHeader = "x-anthropic-billing-header:";

bool IsBillingHeader(std::string_view text) { return text.substr(0, kBillingHeader.size()) == kBillingHeader; }

// The `system` field's text, with a leading billing-header block (or, in a
// string, a leading billing-header line) moved to *billing_header.
Status SystemText(const json& v, std::string* out, std::string* billing_header) {
  if (v.is_string() && IsBillingHeader(v.get_ref<const std::string&>())) {
    const std::string& s = v.get_ref<const std::string&>();
    size_t eol = s.find('\n');
    size_t cut = eol == std::string::npos ? s.size() : eol + 1;
    *billing_header = s.substr(0, cut);
    *out = s.substr(cut);
    return Status::Ok();
  }
  if (v.is_array() && !v.empty() && v[0].is_object() && v[0].value("type", "") == "text" &&
      v[0].contains("text") && v[0]["text"].is_string() && IsBillingHeader(v[0]["text"].get_ref<const std::string&>())) {
    *billing_header = v[0]["text"].get<std::string>();
    json rest(v.begin() + 1, v.end());
    return TextOf(rest, "system", out);
  }
  return TextOf(v, "system", out);
}

Status ParseUserTurn(const json& content, const std::string& path, json* out_messages) {
  if (content.is_string()) {
    out_messages->push_back({{"role", "user"}, {"content", content.get<std::string>()}});
    return Status::Ok();
  }
  if (!content.is_array()) return TypeError(path, "a string or an array of content blocks", content);
  std::string text;
  bool has_text = false;
  LINEAGE_RETURN_IF_ERROR(ForEachBlock(content, path, [&](const std::string& type, const json& b, const std::string& bpath) {
    if (type == "text") {
      has_text = true;
      return AppendText(b, "text", bpath, &text);
    }
    if (type == "tool_result") {
      std::string id, result;
      LINEAGE_RETURN_IF_ERROR(GetString(b, "tool_use_id", bpath, &id, true));
      if (Has(b, "content")) LINEAGE_RETURN_IF_ERROR(TextOf(b.at("content"), bpath + ".content", &result));
      out_messages->push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", result}});
      return Status::Ok();
    }
    if (type == "image" || type == "document")
      return Unsupported("'" + bpath + "': content blocks of type '" + type + "' are not supported");
    return InvalidArgument("'" + bpath + ".type' has unknown value '" + type + "'");
  }));
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
  LINEAGE_RETURN_IF_ERROR(ForEachBlock(content, path, [&](const std::string& type, const json& b, const std::string& bpath) {
    if (type == "text") return AppendText(b, "text", bpath, &text);
    if (type == "thinking") return AppendText(b, "thinking", bpath, &reasoning);
    if (type == "redacted_thinking") return Status::Ok();  // opaque to this server; nothing to render
    if (type != "tool_use")
      return InvalidArgument("'" + bpath + ".type' has unknown value '" + type + "' for an assistant turn");
    std::string id, name;
    LINEAGE_RETURN_IF_ERROR(GetString(b, "id", bpath, &id, true));
    LINEAGE_RETURN_IF_ERROR(GetString(b, "name", bpath, &name, true));
    json input = json::object();
    if (Has(b, "input")) {
      input = b.at("input");
      if (!input.is_object()) return TypeError(bpath + ".input", "an object", input);
    }
    calls.push_back(MakeToolCall(id, name, std::move(input)));
    return Status::Ok();
  }));
  msg["content"] = text;
  if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  out_messages->push_back(std::move(msg));
  return Status::Ok();
}

Status ParseTools(const json& body, ApiRequest* req) {
  if (!Has(body, "tools")) return Status::Ok();
  return ForEachObject(body.at("tools"), "tools", [&](const json& t, const std::string& path) {
    // Server tools (web search, code execution) carry a versioned type and no
    // schema; they run on Anthropic's side and have no meaning here.
    if (Has(t, "type") && t.at("type") != "custom" && !Has(t, "input_schema")) return Status::Ok();
    std::string name, description;
    LINEAGE_RETURN_IF_ERROR(GetString(t, "name", path, &name, true));
    LINEAGE_RETURN_IF_ERROR(GetString(t, "description", path, &description));
    if (!Has(t, "input_schema")) return InvalidArgument("missing required field '" + path + ".input_schema'");
    const json& schema = t.at("input_schema");
    if (!schema.is_object()) return TypeError(path + ".input_schema", "an object", schema);
    req->tools.push_back(MakeTool(name, description, Has(t, "description"), schema));
    return Status::Ok();
  });
}

Status ParseToolChoice(const json& body, ApiRequest* req) {
  if (!Has(body, "tool_choice")) return Status::Ok();
  const json& tc = body.at("tool_choice");
  if (!tc.is_object()) return TypeError("tool_choice", "an object", tc);
  std::string type;
  LINEAGE_RETURN_IF_ERROR(GetString(tc, "type", "tool_choice", &type, true));
  bool disable_parallel = false;
  LINEAGE_RETURN_IF_ERROR(GetBool(tc, "disable_parallel_tool_use", "tool_choice", &disable_parallel));
  req->parallel_tool_calls = !disable_parallel;
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

namespace {
Result<ApiRequest> ParseMessages(json body);
}  // namespace

Result<ApiRequest> ParseAnthropicMessagesRequest(const std::string& body_text) {
  LINEAGE_ASSIGN_OR_RETURN(json body, ParseBodyObject(body_text));
  return ParseMessages(std::move(body));
}

Result<ApiRequest> ParseAnthropicCountTokensRequest(const std::string& body_text) {
  LINEAGE_ASSIGN_OR_RETURN(json body, ParseBodyObject(body_text));
  if (!Has(body, "max_tokens")) body["max_tokens"] = 1;
  return ParseMessages(std::move(body));
}

namespace {
Result<ApiRequest> ParseMessages(json body) {
  ApiRequest req;
  req.api = ApiKind::kAnthropicMessages;
  LINEAGE_RETURN_IF_ERROR(GetString(body, "model", "", &req.model));
  if (!Has(body, "max_tokens")) return InvalidArgument("missing required field 'max_tokens'");
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "max_tokens", "", &req.sampling.max_tokens, 1, kMaxTokensLimit));
  if (Has(body, "system")) {
    std::string system;
    LINEAGE_RETURN_IF_ERROR(SystemText(body.at("system"), &system, &req.billing_header));
    if (!system.empty() || req.billing_header.empty()) req.messages.push_back({{"role", "system"}, {"content", system}});
  }
  if (!Has(body, "messages")) return InvalidArgument("missing required field 'messages'");
  const json& messages = body.at("messages");
  if (messages.is_array() && messages.empty()) return InvalidArgument("'messages' must not be empty");
  LINEAGE_RETURN_IF_ERROR(ForEachObject(messages, "messages", [&](const json& m, const std::string& path) {
    std::string role;
    LINEAGE_RETURN_IF_ERROR(GetString(m, "role", path, &role, true));
    if (!m.contains("content")) return InvalidArgument("missing required field '" + path + ".content'");
    if (role == "user") return ParseUserTurn(m.at("content"), path + ".content", &req.messages);
    if (role == "assistant") return ParseAssistantTurn(m.at("content"), path + ".content", &req.messages);
    if (role == "system") {
      // Claude Code's mid-conversation system messages (beta
      // mid-conversation-system-2026-04-07); the prompt builder places them.
      std::string text;
      LINEAGE_RETURN_IF_ERROR(TextOf(m.at("content"), path + ".content", &text));
      req.messages.push_back({{"role", "system"}, {"content", text}});
      return Status::Ok();
    }
    return InvalidArgument("'" + path + ".role' has unknown value '" + role + "' (expected user, assistant or system)");
  }));
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
}  // namespace

}  // namespace lineage::server
