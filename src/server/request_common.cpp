#include "server/request_common.h"

#include "server/json_fields.h"
#include "server/json_parse.h"

namespace lineage::server {

using json = nlohmann::ordered_json;

Status ParseSampling(const json& body, SamplingParams* out) {
  LINEAGE_RETURN_IF_ERROR(GetFloat(body, "temperature", "", &out->temperature, 0.0, 100.0));
  LINEAGE_RETURN_IF_ERROR(GetFloat(body, "top_p", "", &out->top_p, 0.0, 1.0));
  int64_t top_k = out->top_k;
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "top_k", "", &top_k, 0, 1 << 24));
  out->top_k = static_cast<int32_t>(top_k);
  return GetSeed(body, "seed", &out->seed);
}

json MakeTool(const std::string& name, const std::string& description, bool has_description, json parameters) {
  json f = {{"name", name}};
  if (has_description) f["description"] = description;
  f["parameters"] = std::move(parameters);
  return {{"type", "function"}, {"function", std::move(f)}};
}

Status AddFunctionTool(const json& f, const std::string& path, ApiRequest* req) {
  std::string name, description;
  LINEAGE_RETURN_IF_ERROR(GetString(f, "name", path, &name, true));
  LINEAGE_RETURN_IF_ERROR(GetString(f, "description", path, &description));
  json parameters = json::object();
  if (Has(f, "parameters")) {
    parameters = f.at("parameters");
    if (!parameters.is_object()) return TypeError(path + ".parameters", "an object", parameters);
  }
  req->tools.push_back(MakeTool(name, description, Has(f, "description"), std::move(parameters)));
  return Status::Ok();
}

Status JoinTextParts(const json& content, const std::string& path,
                     std::initializer_list<std::string_view> text_types, std::string* out) {
  out->clear();
  if (content.is_null()) return Status::Ok();
  if (content.is_string()) {
    *out = content.get<std::string>();
    return Status::Ok();
  }
  if (!content.is_array()) return TypeError(path, "a string or an array of content parts", content);
  return ForEachObject(content, path, [&](const json& part, const std::string& part_path) {
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(part, "type", part_path, &type, true));
    for (std::string_view t : text_types) {
      if (type != t) continue;
      std::string text;
      LINEAGE_RETURN_IF_ERROR(GetString(part, "text", part_path, &text, true));
      *out += text;
      return Status::Ok();
    }
    for (std::string_view t : {"image_url", "input_image", "input_audio", "file", "input_file"})
      if (type == t) return Unsupported("'" + part_path + "': content parts of type '" + type + "' are not supported");
    return InvalidArgument("'" + part_path + ".type' has unknown value '" + type + "'");
  });
}

Status SetToolChoice(const std::string& value, ApiRequest* req) {
  if (value == "auto") req->tool_choice = ToolChoice::kAuto;
  else if (value == "none") req->tool_choice = ToolChoice::kNone;
  else if (value == "required") req->tool_choice = ToolChoice::kRequired;
  else return InvalidArgument("'tool_choice' has unknown value '" + value + "'");
  return Status::Ok();
}

json MakeToolCall(const std::string& id, const std::string& name, json arguments) {
  json call = json::object();
  if (!id.empty()) call["id"] = id;
  call["type"] = "function";
  call["function"] = {{"name", name}, {"arguments", std::move(arguments)}};
  return call;
}

json ArgumentsFromString(const std::string& arguments) {
  if (arguments.empty()) return json::object();
  Result<json> parsed = ParseJsonBounded(arguments, "tool call arguments");
  if (parsed.ok() && parsed->is_object()) return std::move(parsed).value();
  return arguments;
}

}  // namespace lineage::server
