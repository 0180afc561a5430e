#include "server/api/json_fields.h"

#include <cmath>

#include "server/api/json_parse.h"

namespace lineage::server {

using json = nlohmann::ordered_json;

Result<json> ParseBodyObject(const std::string& body) {
  LINEAGE_ASSIGN_OR_RETURN(json v, ParseJsonBounded(body, "request body"));
  if (!v.is_object()) return InvalidArgument("request body must be a JSON object, got " + JsonTypeName(v));
  return v;
}

std::string JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    default: return "unknown";
  }
}

Status TypeError(const std::string& path, const char* expected, const json& got) {
  return InvalidArgument("'" + path + "' must be " + expected + ", got " + JsonTypeName(got));
}

bool Has(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && !it->is_null();
}

static std::string Join(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

Status GetString(const json& obj, const char* key, const std::string& path, std::string* out, bool required) {
  if (!Has(obj, key)) {
    if (required) return InvalidArgument("missing required field '" + Join(path, key) + "'");
    return Status::Ok();
  }
  const json& v = obj.at(key);
  if (!v.is_string()) return TypeError(Join(path, key), "a string", v);
  *out = v.get<std::string>();
  return Status::Ok();
}

Status GetBool(const json& obj, const char* key, const std::string& path, bool* out) {
  if (!Has(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_boolean()) return TypeError(Join(path, key), "a boolean", v);
  *out = v.get<bool>();
  return Status::Ok();
}

Status GetInt(const json& obj, const char* key, const std::string& path, int64_t* out, int64_t min_value,
              int64_t max_value) {
  if (!Has(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  int64_t x;
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    // Read as int64 it would wrap negative and be echoed so.
    return InvalidArgument("'" + Join(path, key) + "' must be between " + std::to_string(min_value) + " and " +
                           std::to_string(max_value) + ", got " + std::to_string(v.get<uint64_t>()));
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
             std::fabs(v.get<double>()) < 9e15) {
    x = static_cast<int64_t>(v.get<double>());
  } else {
    return TypeError(Join(path, key), "an integer", v);
  }
  if (x < min_value || x > max_value)
    return InvalidArgument("'" + Join(path, key) + "' must be between " + std::to_string(min_value) + " and " +
                           std::to_string(max_value) + ", got " + std::to_string(x));
  *out = x;
  return Status::Ok();
}

Status GetFloat(const json& obj, const char* key, const std::string& path, float* out, double min_value,
                double max_value) {
  if (!Has(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_number()) return TypeError(Join(path, key), "a number", v);
  double x = v.get<double>();
  if (!(x >= min_value && x <= max_value))
    return InvalidArgument("'" + Join(path, key) + "' must be between " + std::to_string(min_value) + " and " +
                           std::to_string(max_value));
  *out = static_cast<float>(x);
  return Status::Ok();
}

Status GetSeed(const json& obj, const char* key, std::optional<uint64_t>* out) {
  if (!Has(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    // Negative seeds are accepted as their two's-complement bit pattern.
    *out = static_cast<uint64_t>(v.get<int64_t>());
  } else {
    return TypeError(key, "an integer", v);
  }
  return Status::Ok();
}

Status GetStringList(const json& obj, const char* key, const std::string& path, std::vector<std::string>* out) {
  if (!Has(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  out->clear();
  if (v.is_string()) {
    if (!v.get<std::string>().empty()) out->push_back(v.get<std::string>());
    return Status::Ok();
  }
  if (!v.is_array()) return TypeError(Join(path, key), "a string or an array of strings", v);
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      return TypeError(Join(path, key) + "[" + std::to_string(i) + "]", "a string", v[i]);
    if (!v[i].get<std::string>().empty()) out->push_back(v[i].get<std::string>());
  }
  return Status::Ok();
}

Status ForEachObject(const json& array, const std::string& path,
                     const std::function<Status(const json&, const std::string&)>& fn) {
  if (!array.is_array()) return TypeError(path, "an array", array);
  for (size_t i = 0; i < array.size(); ++i) {
    std::string item_path = path + "[" + std::to_string(i) + "]";
    if (!array[i].is_object()) return TypeError(item_path, "an object", array[i]);
    LINEAGE_RETURN_IF_ERROR(fn(array[i], item_path));
  }
  return Status::Ok();
}

}  // namespace lineage::server
