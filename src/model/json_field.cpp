#include "model/json_field.h"

#include "core/read_file.h"

#include <cmath>

namespace lineage::model {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxShownChars = 40;

std::string Shown(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > kMaxShownChars) s = s.substr(0, kMaxShownChars) + "...";
  return s;
}

}  // namespace

JsonField JsonField::operator[](std::string_view key) const {
  std::string path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  const Json* child = nullptr;
  if (v_ != nullptr && v_->is_object()) {
    auto it = v_->find(key);
    if (it != v_->end()) child = &*it;
  }
  return JsonField(child, file_, std::move(path));
}

JsonField JsonField::Item(size_t i) const {
  const Json* child = v_ != nullptr && v_->is_array() && i < v_->size() ? &(*v_)[i] : nullptr;
  return JsonField(child, file_, path_ + "[" + std::to_string(i) + "]");
}

std::string JsonField::Found() const {
  if (!present()) return "missing";
  switch (v_->type()) {
    case Json::value_t::object: return "an object";
    case Json::value_t::array:
      return "an array of " + std::to_string(v_->size()) + (v_->size() == 1 ? " element" : " elements");
    case Json::value_t::string: return "the string " + Shown(*v_);
    case Json::value_t::boolean: return v_->get<bool>() ? "true" : "false";
    case Json::value_t::number_float: return "the number " + Shown(*v_);
    default: return Shown(*v_);  // integers
  }
}

Status JsonField::Error(const std::string& expected) const {
  return InvalidArgument(file_ + ": field '" + (path_.empty() ? "(top level)" : path_) + "' is " + Found() +
                         ", expected " + expected);
}

Result<int64_t> JsonField::Int(int64_t min, int64_t max) const {
  const std::string expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!present()) return Error(expected);
  int64_t x;
  if (v_->is_number_unsigned()) {
    const uint64_t u = v_->get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) return Error(expected);
    x = static_cast<int64_t>(u);
  } else if (v_->is_number_integer()) {
    x = v_->get<int64_t>();
  } else {
    return Error(expected);
  }
  if (x < min || x > max) return Error(expected);
  return x;
}

Result<double> JsonField::PositiveFloat(double max) const {
  const std::string expected = "a finite number in (0, " + Shown(Json(max)) + "]";
  if (!present() || !v_->is_number()) return Error(expected);
  const double x = v_->get<double>();
  if (!std::isfinite(x) || !(x > 0) || x > max) return Error(expected);
  return x;
}

Result<bool> JsonField::Bool() const {
  if (!present() || !v_->is_boolean()) return Error("true or false");
  return v_->get<bool>();
}

Result<std::string> JsonField::String() const {
  if (!present() || !v_->is_string()) return Error("a string");
  return v_->get<std::string>();
}

Result<int64_t> JsonField::IntOr(int64_t fallback, int64_t min, int64_t max) const {
  if (!present()) return fallback;
  return Int(min, max);
}

Result<double> JsonField::PositiveFloatOr(double fallback, double max) const {
  if (!present()) return fallback;
  return PositiveFloat(max);
}

Result<bool> JsonField::BoolOr(bool fallback) const {
  if (!present()) return fallback;
  return Bool();
}

Result<std::string> JsonField::StringOr(std::string fallback) const {
  if (!present()) return fallback;
  return String();
}

Status JsonField::ForEachItem(const std::function<Status(const JsonField&)>& fn, bool optional) const {
  if (optional && !present()) return Status::Ok();
  if (!is_array()) return Error("an array");
  for (size_t i = 0; i < v_->size(); ++i) {
    LINEAGE_RETURN_IF_ERROR(fn(Item(i)));
  }
  return Status::Ok();
}

Status JsonField::ForEachMember(const std::function<Status(const std::string&, const JsonField&)>& fn,
                                bool optional) const {
  if (optional && !present()) return Status::Ok();
  if (!is_object()) return Error("an object");
  for (auto it = v_->begin(); it != v_->end(); ++it) {
    LINEAGE_RETURN_IF_ERROR(fn(it.key(), JsonField(&it.value(), file_, path_.empty() ? it.key() : path_ + "." + it.key())));
  }
  return Status::Ok();
}

Result<Json> ParseJsonText(std::string_view text, const std::string& file) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corrupt(file + ": bad JSON");
  return j;
}

Result<Json> ReadJsonFile(const std::string& path) {
  LINEAGE_ASSIGN_OR_RETURN(std::string text, ReadFileBounded(path, kMaxJsonFileBytes));
  return ParseJsonText(text, path);
}

}  // namespace lineage::model
