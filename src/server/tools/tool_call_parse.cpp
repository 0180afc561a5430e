#include "server/tools/tool_call_parse.h"

#include "server/api/json_parse.h"

namespace lineage::server {
namespace {

using json = nlohmann::ordered_json;

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string ParameterSchemaType(const json& tools, const std::string& name, const std::string& arg) {
  if (!tools.is_array()) return "";
  for (const json& t : tools) {
    const json* f = t.contains("function") ? &t.at("function") : &t;
    if (!f->is_object() || f->value("name", "") != name) continue;
    const json* params = f->contains("parameters") ? &f->at("parameters") : nullptr;
    if (!params || !params->is_object() || !params->contains("properties")) return "";
    const json& props = params->at("properties");
    if (!props.is_object() || !props.contains(arg) || !props.at(arg).is_object()) return "";
    const json& type = props.at(arg).value("type", json());
    if (type.is_string()) return type.get<std::string>();
    if (type.is_array()) {
      for (const json& ty : type)
        if (ty == "string") return "string";
      return type.empty() || !type[0].is_string() ? "" : type[0].get<std::string>();
    }
    return "";
  }
  return "";
}

namespace {

json TypedValue(const std::string& value, const std::string& schema_type) {
  if (schema_type == "string" || schema_type.empty()) return value;
  Result<json> parsed = ParseJsonBounded(value, "tool call parameter");
  if (!parsed.ok()) return value;
  return std::move(parsed).value();
}

Result<ToolCall> ParseXml(std::string_view s, const json& tools) {
  constexpr std::string_view kFn = "<function=";
  if (s.substr(0, kFn.size()) != kFn) return InvalidArgument("tool call does not start with <function=");
  size_t name_end = s.find('>', kFn.size());
  if (name_end == std::string_view::npos) return InvalidArgument("unterminated <function= tag");
  ToolCall call;
  call.name = std::string(Trim(s.substr(kFn.size(), name_end - kFn.size())));
  if (call.name.empty()) return InvalidArgument("empty function name");
  size_t pos = name_end + 1;
  constexpr std::string_view kParam = "<parameter=", kParamEnd = "</parameter>", kFnEnd = "</function>";
  for (;;) {
    size_t next = s.find_first_not_of(" \t\r\n", pos);
    if (next == std::string_view::npos) break;  // tolerate a missing </function>
    if (s.substr(next, kFnEnd.size()) == kFnEnd) {
      if (!Trim(s.substr(next + kFnEnd.size())).empty()) return InvalidArgument("text after </function>");
      break;
    }
    if (s.substr(next, kParam.size()) != kParam) return InvalidArgument("expected <parameter= or </function>");
    size_t arg_end = s.find('>', next + kParam.size());
    if (arg_end == std::string_view::npos) return InvalidArgument("unterminated <parameter= tag");
    std::string arg(Trim(s.substr(next + kParam.size(), arg_end - next - kParam.size())));
    size_t value_begin = arg_end + 1;
    size_t value_end = s.find(kParamEnd, value_begin);
    if (value_end == std::string_view::npos) return InvalidArgument("unterminated parameter '" + arg + "'");
    std::string_view value = s.substr(value_begin, value_end - value_begin);
    // The template writes "\nVALUE\n"; only that framing is removed.
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    call.arguments[arg] = TypedValue(std::string(value), ParameterSchemaType(tools, call.name, arg));
    pos = value_end + kParamEnd.size();
  }
  return call;
}

Result<ToolCall> ParseJson(std::string_view s) {
  LINEAGE_ASSIGN_OR_RETURN(json v, ParseJsonBounded(s, "tool call"));
  if (!v.is_object()) return InvalidArgument("tool call is not a JSON object");
  if (!v.contains("name") || !v.at("name").is_string()) return InvalidArgument("tool call without a name");
  ToolCall call;
  call.name = v.at("name").get<std::string>();
  const char* key = v.contains("arguments") ? "arguments" : "parameters";
  if (v.contains(key)) {
    json a = v.at(key);
    if (a.is_string()) {
      Result<json> parsed = ParseJsonBounded(a.get<std::string>(), "tool call arguments");
      a = parsed.ok() ? std::move(parsed).value() : json();
    }
    if (!a.is_object()) return InvalidArgument("tool call arguments are not an object");
    call.arguments = std::move(a);
  }
  return call;
}

}  // namespace

Result<ToolCall> ParseToolCallBody(std::string_view body, const json& tools) {
  std::string_view s = Trim(body);
  if (s.empty()) return InvalidArgument("empty tool call");
  if (s.front() == '{') return ParseJson(s);
  return ParseXml(s, tools);
}

}  // namespace lineage::server
