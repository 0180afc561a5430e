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
