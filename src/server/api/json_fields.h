// Typed access to fields of a request body with errors that name the field.
//
// Every accessor returns a Status (kInvalidArgument) naming the path of the
// offending field ("messages[2].content") and the expected type, so both API
// parsers give the same clear 4xx message without repeating type checks.
// Absent and null fields are treated alike: the optional accessors leave the
// output untouched and succeed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace lineage::server {

// Parses the body; a syntax error, or a top level that is not an object, is
// kInvalidArgument.
Result<nlohmann::ordered_json> ParseBodyObject(const std::string& body);

// The JSON type name used in messages ("string", "array", ...).
std::string JsonTypeName(const nlohmann::ordered_json& v);

Status TypeError(const std::string& path, const char* expected, const nlohmann::ordered_json& got);

// True when `obj` has `key` with a non-null value.
bool Has(const nlohmann::ordered_json& obj, const char* key);

Status GetString(const nlohmann::ordered_json& obj, const char* key, const std::string& path, std::string* out,
                 bool required = false);
Status GetBool(const nlohmann::ordered_json& obj, const char* key, const std::string& path, bool* out);
Status GetInt(const nlohmann::ordered_json& obj, const char* key, const std::string& path, int64_t* out,
              int64_t min_value, int64_t max_value);
Status GetFloat(const nlohmann::ordered_json& obj, const char* key, const std::string& path, float* out,
                double min_value, double max_value);
Status GetSeed(const nlohmann::ordered_json& obj, const char* key, std::optional<uint64_t>* out);
// A string or an array of strings ("stop" in OpenAI; "stop_sequences" in
// Anthropic). Empty strings are dropped: they would stop before any output.
Status GetStringList(const nlohmann::ordered_json& obj, const char* key, const std::string& path,
                     std::vector<std::string>* out);

// Checks that `array` is an array of objects and calls fn(item, "path[i]")
// on each, stopping at the first error.
Status ForEachObject(const nlohmann::ordered_json& array, const std::string& path,
                     const std::function<Status(const nlohmann::ordered_json&, const std::string&)>& fn);

}  // namespace lineage::server
