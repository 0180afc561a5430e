// JsonField: typed, range-checked reading of one value of a JSON file that
// comes with a model (config.json, generation_config.json, tokenizer.json,
// tokenizer_config.json, a safetensors header).
//
// A JsonField is a value plus where it came from: the file and the path of
// the value inside it ("text_config.head_dim", "layer_types[3]"). Every
// reader checks the JSON type and the range before returning, and its error
// names all four things a user needs to fix the file:
//   DIR/config.json: field 'text_config.head_dim' is 9223372036854775807,
//   expected an integer in [1, 4096]
// Absent and null values are alike: "missing". A child of a missing value or
// of a non-object is missing too, so chains never fail half-way.
//
// Nothing here throws. A JsonField points into the parsed document, which
// must outlive it; it is a small value (a pointer and two strings) meant for
// one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"

namespace lineage::model {

class JsonField {
 public:
  // The root of a document read from `file`.
  JsonField(const nlohmann::json& root, std::string file) : v_(&root), file_(std::move(file)) {}

  JsonField operator[](std::string_view key) const;
  // Element i of an array; missing when out of range or not an array.
  JsonField Item(size_t i) const;
  bool present() const { return v_ != nullptr && !v_->is_null(); }
  bool is_object() const { return v_ != nullptr && v_->is_object(); }
  bool is_array() const { return v_ != nullptr && v_->is_array(); }
  bool is_string() const { return v_ != nullptr && v_->is_string(); }
  // The raw value; null when missing.
  const nlohmann::json* raw() const { return v_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  // "FILE: field 'PATH' is FOUND, expected EXPECTED" (kInvalidArgument).
  Status Error(const std::string& expected) const;

  // Required values: a missing one is an error.
  Result<int64_t> Int(int64_t min, int64_t max) const;
  Result<double> PositiveFloat(double max) const;  // finite, in (0, max]
  Result<bool> Bool() const;
  Result<std::string> String() const;
  // Optional values: `fallback` when missing, an error when present but wrong.
  Result<int64_t> IntOr(int64_t fallback, int64_t min, int64_t max) const;
  Result<double> PositiveFloatOr(double fallback, double max) const;
  Result<bool> BoolOr(bool fallback) const;
  Result<std::string> StringOr(std::string fallback) const;

  // Calls fn on each element of an array (an error when not an array; a
  // missing value has no elements when `optional`), stopping at the first error.
  Status ForEachItem(const std::function<Status(const JsonField&)>& fn, bool optional = false) const;
  // Calls fn on each member of an object, likewise.
  Status ForEachMember(const std::function<Status(const std::string&, const JsonField&)>& fn,
                       bool optional = false) const;

 private:
  JsonField(const nlohmann::json* v, std::string file, std::string path)
      : v_(v), file_(std::move(file)), path_(std::move(path)) {}
  std::string Found() const;

  const nlohmann::json* v_;
  std::string file_;
  std::string path_;  // empty for the root
};

// Parses `text` as JSON without exceptions; a syntax error names the file.
Result<nlohmann::json> ParseJsonText(std::string_view text, const std::string& file);
// Reads and parses a whole file.
// A configuration JSON (config.json, tokenizer_config.json, an index): real
// ones are KB to a few MB.
inline constexpr uint64_t kMaxJsonFileBytes = uint64_t{256} << 20;
Result<nlohmann::json> ReadJsonFile(const std::string& path);

}  // namespace lineage::model
