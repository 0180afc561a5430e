#include "server/api/request_common.h"

#include "server/api/json_fields.h"
#include "server/api/json_parse.h"

namespace lineage::server {

using json = nlohmann::ordered_json;

Status ParseSampling(const json& body, SamplingParams* out) {
  LINEAGE_RETURN_IF_ERROR(GetFloat(body, "temperature", "", &out->temperature, 0.0, 100.0));
  LINEAGE_RETURN_IF_ERROR(GetFloat(body, "top_p", "", &out->top_p, 0.0, 1.0));
  int64_t top_k = out->top_k;
  LINEAGE_RETURN_IF_ERROR(GetInt(body, "top_k", "", &top_k, 0, 1 << 24));
  out->top_k = static_cast<int32_t>(top_k);
  if (Has(body, "speculative.type")) {
    std::string type;
    LINEAGE_RETURN_IF_ERROR(GetString(body, "speculative.type", "", &type));
    out->spec_type = type;
  }
  for (auto [key, field] : {std::pair{"speculative.n_max", &out->spec_draft_max},
                            std::pair{"speculative.n_min", &out->spec_draft_min}}) {
    if (!Has(body, key)) continue;
    int64_t n = 0;
    LINEAGE_RETURN_IF_ERROR(GetInt(body, key, "", &n, 0, 256));
    *field = n;
  }
  return GetSeed(body, "seed", &out->seed);
}

Status ParseLogitAdjustments(const json& body, SamplingParams* out) {
  LINEAGE_RETURN_IF_ERROR(GetFloat(body, "frequency_penalty", "", &out->frequency_penalty, -2.0, 2.0));
  LINEAGE_RETURN_IF_ERROR(GetFloat(body, "presence_penalty", "", &out->presence_penalty, -2.0, 2.0));
  if (!Has(body, "logit_bias")) return Status::Ok();
  const json& bias = body.at("logit_bias");
  if (!bias.is_object()) return TypeError("logit_bias", "an object", bias);
  for (const auto& [key, value] : bias.items()) {
    const std::string path = "logit_bias." + key;
    // A token id in decimal, as OpenAI writes it: digits only, below 2^31.
    bool digits = !key.empty() && key.size() <= 10 && key.find_first_not_of("0123456789") == std::string::npos;
    int64_t id = digits ? std::stoll(key) : -1;
    if (id < 0 || id > INT32_MAX)
      return InvalidArgument("'logit_bias' keys must be token ids (decimal integers), got '" + key + "'");
    float b = 0.0f;
    LINEAGE_RETURN_IF_ERROR(GetFloat(bias, key.c_str(), "logit_bias", &b, -100.0, 100.0));
    if (!value.is_number()) return TypeError(path, "a number", value);  // null: GetFloat took it as absent
    out->logit_bias.push_back({static_cast<int32_t>(id), b});
  }
  return Status::Ok();
}

Status ParseReplyFormat(const json& format, const std::string& path, ApiRequest* req) {
  if (!format.is_object()) return TypeError(path, "an object", format);
  std::string type;
  LINEAGE_RETURN_IF_ERROR(GetString(format, "type", path, &type, true));
  if (type == "text") {
    req->reply_format = ReplyFormat::kText;
  } else if (type == "json_object") {
    req->reply_format = ReplyFormat::kJsonObject;
  } else if (type == "json_schema") {
    const json* holder = &format;
    std::string holder_path = path;
    if (Has(format, "json_schema")) {
      holder = &format.at("json_schema");
      holder_path = path + ".json_schema";
      if (!holder->is_object()) return TypeError(holder_path, "an object", *holder);
    }
    if (!Has(*holder, "schema")) return InvalidArgument("missing required field '" + holder_path + ".schema'");
    const json& schema = holder->at("schema");
    if (!schema.is_object()) return TypeError(holder_path + ".schema", "an object", schema);
    req->reply_format = ReplyFormat::kJsonSchema;
    req->reply_schema = schema;
  } else {
    return InvalidArgument("'" + path + ".type' must be 'text', 'json_object' or 'json_schema', got '" + type + "'");
  }
  return Status::Ok();
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
