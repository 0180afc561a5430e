// Shared by the tool_choice tests: the tools they offer, and an independent
// check of a value against the subset of JSON Schema the grammar enforces
// (written from the schema's meaning, not from the grammar's code).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace lineage::server::testing {

inline nlohmann::ordered_json ToolChoiceTools() {
  using json = nlohmann::ordered_json;
  json read_file = {{"type", "function"},
                    {"function",
                     {{"name", "read_file"},
                      {"description", "Read a file"},
                      {"parameters",
                       {{"type", "object"},
                        {"properties", {{"path", {{"type", "string"}}}, {"limit", {{"type", "integer"}}}}},
                        {"required", {"path"}}}}}}};
  json set_mode = {
      {"type", "function"},
      {"function",
       {{"name", "set_mode"},
        {"parameters",
         {{"type", "object"},
          {"properties",
           {{"mode", {{"type", "string"}, {"enum", {"fast", "slow"}}}},
            {"verbose", {{"type", "boolean"}}},
            {"ratio", {{"type", "number"}}},
            {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 3}}},
            {"extra", {{"type", "object"}, {"properties", {{"a", {{"type", "null"}}}}}}},
            {"anything", json::object()}}},
          {"required", {"mode", "verbose"}}}}}}};
  return json::array({read_file, set_mode});
}

// True when `v` satisfies `schema` for the keywords type, enum, properties
// (no other keys), required, items and maxItems; other schemas accept anything.
inline bool SatisfiesSchema(const nlohmann::ordered_json& schema, const nlohmann::ordered_json& v, std::string* why) {
  using json = nlohmann::ordered_json;
  if (!schema.is_object() || schema.empty()) return true;
  if (schema.contains("enum")) {
    for (const json& e : schema["enum"])
      if (e == v) return true;
    *why = v.dump() + " is not in the enum";
    return false;
  }
  std::string type = schema.value("type", "");
  bool ok = type.empty() || (type == "string" && v.is_string()) || (type == "integer" && v.is_number_integer()) ||
            (type == "number" && v.is_number()) || (type == "boolean" && v.is_boolean()) ||
            (type == "null" && v.is_null()) || (type == "object" && v.is_object()) || (type == "array" && v.is_array());
  if (!ok) {
    *why = v.dump() + " is not of type " + type;
    return false;
  }
  if (v.is_object() && schema.contains("properties")) {
    for (const auto& [k, sub] : v.items()) {
      if (!schema["properties"].contains(k)) {
        *why = "unknown key " + k;
        return false;
      }
      if (!SatisfiesSchema(schema["properties"][k], sub, why)) return false;
    }
    for (const json& r : schema.value("required", json::array()))
      if (!v.contains(r.get<std::string>())) {
        *why = "missing required " + r.get<std::string>();
        return false;
      }
  }
  if (v.is_array()) {
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) {
      *why = "too many items";
      return false;
    }
    if (schema.contains("items"))
      for (const json& item : v)
        if (!SatisfiesSchema(schema["items"], item, why)) return false;
  }
  return true;
}

inline const nlohmann::ordered_json* ToolSchema(const nlohmann::ordered_json& tools, const std::string& name) {
  for (const auto& t : tools)
    if (t["function"]["name"] == name) return &t["function"]["parameters"];
  return nullptr;
}

}  // namespace lineage::server::testing
