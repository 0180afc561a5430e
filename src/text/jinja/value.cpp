#include "text/jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <utf8proc.h>

#include "text/jinja/error.h"
#include "text/jinja/render_memory.h"

namespace lineage::jinja {
namespace {

// Containers whose last reference goes are destroyed recursively up to this
// depth; deeper ones wait on the thread's pending list, which the outermost
// destruction drains in a loop. A nested list built in a template loop can
// be millions of levels deep.
constexpr int kMaxDestroyDepth = 64;

struct DeferredDestruction {
  int depth = 0;
  std::vector<std::shared_ptr<void>> pending;
};

DeferredDestruction& ThreadDeferred() {
  thread_local DeferredDestruction d;
  return d;
}

size_t ChargeFor(size_t bytes) { return ChargeRenderBytes(bytes) ? bytes : 0; }

}  // namespace

Value::Value() : charged_bytes_(static_cast<uint32_t>(ChargeFor(sizeof(Value)))) {}

Value::Value(const Value& other)
    : kind_(other.kind_),
      flag_(other.flag_),
      charged_bytes_(static_cast<uint32_t>(ChargeFor(sizeof(Value) + other.s_.size()))),
      i_(other.i_),
      f_(other.f_),
      s_(other.s_),
      list_(other.list_),
      dict_(other.dict_),
      fn_(other.fn_) {}

Value::Value(Value&& other) noexcept
    : kind_(other.kind_),
      flag_(other.flag_),
      charged_bytes_(other.charged_bytes_),
      i_(other.i_),
      f_(other.f_),
      s_(std::move(other.s_)),
      list_(std::move(other.list_)),
      dict_(std::move(other.dict_)),
      fn_(std::move(other.fn_)) {
  other.charged_bytes_ = 0;
  other.s_.clear();
}

Value& Value::operator=(const Value& other) {
  if (this != &other) {
    Value copy(other);
    Swap(copy);
  }
  return *this;
}

Value& Value::operator=(Value&& other) noexcept {
  // Through a temporary: `other` may live inside a container this value is
  // about to drop.
  if (this != &other) {
    Value moved(std::move(other));
    Swap(moved);
  }
  return *this;
}

Value::~Value() {
  if (charged_bytes_) ReleaseRenderBytes(charged_bytes_);
  DropContainers();
}

void Value::Swap(Value& other) noexcept {
  std::swap(kind_, other.kind_);
  std::swap(flag_, other.flag_);
  std::swap(charged_bytes_, other.charged_bytes_);
  std::swap(i_, other.i_);
  std::swap(f_, other.f_);
  s_.swap(other.s_);
  list_.swap(other.list_);
  dict_.swap(other.dict_);
  fn_.swap(other.fn_);
}

void Value::SetString(std::string s) {
  if (s.size() > s_.size()) {
    size_t more = ChargeFor(s.size() - s_.size());
    charged_bytes_ += static_cast<uint32_t>(more);
  }
  s_ = std::move(s);
}

void Value::DropContainers() {
  bool last = (list_ && list_.use_count() == 1) || (dict_ && dict_.use_count() == 1);
  if (!last) return;
  DeferredDestruction& d = ThreadDeferred();
  if (d.depth >= kMaxDestroyDepth) {
    if (list_) d.pending.push_back(std::move(list_));
    if (dict_) d.pending.push_back(std::move(dict_));
    return;
  }
  ++d.depth;
  list_.reset();
  dict_.reset();
  if (d.depth == 1) {
    while (!d.pending.empty()) {
      std::shared_ptr<void> next = std::move(d.pending.back());
      d.pending.pop_back();
      next.reset();
    }
  }
  --d.depth;
}

Dict::Dict(const Dict& other) : items_(other.items_) {
  size_t key_bytes = 0;
  for (const auto& kv : items_) key_bytes += kv.first.size();
  charged_key_bytes_ = ChargeFor(key_bytes);
}

Dict::~Dict() {
  if (charged_key_bytes_) ReleaseRenderBytes(charged_key_bytes_);
}

const Value* Dict::Find(std::string_view key) const {
  for (const auto& kv : items_) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

Value* Dict::Find(std::string_view key) {
  for (auto& kv : items_) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

void Dict::Set(std::string key, Value value) {
  if (Value* v = Find(key)) {
    *v = std::move(value);
    return;
  }
  charged_key_bytes_ += ChargeFor(key.size());
  items_.emplace_back(std::move(key), std::move(value));
}

Value Value::MakeList(List items, bool tuple) {
  Value v;
  v.kind_ = Kind::kList;
  v.flag_ = tuple;
  v.list_ = std::make_shared<List>(std::move(items));
  return v;
}

Value Value::MakeDict(std::shared_ptr<Dict> d) {
  Value v;
  v.kind_ = Kind::kDict;
  v.dict_ = d ? std::move(d) : std::make_shared<Dict>();
  return v;
}

Value Value::MakeNamespace(std::shared_ptr<Dict> d) {
  Value v = MakeDict(std::move(d));
  v.kind_ = Kind::kNamespace;
  return v;
}

Value Value::MakeCallable(std::string name, NativeFn fn) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.fn_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

namespace {
constexpr int kMaxJsonDepth = 512;
}  // namespace

Value Value::FromJson(const nlohmann::ordered_json& j) { return FromJson(j, 0); }

Value Value::FromJson(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxJsonDepth) Fail(ErrorKind::kLimit, "input JSON nested too deeply");
  switch (j.type()) {
    case nlohmann::json::value_t::null: return None();
    case nlohmann::json::value_t::boolean: return Bool(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Int(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Float(static_cast<double>(u));
      return Int(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Float(j.get<double>());
    case nlohmann::json::value_t::string: return String(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(FromJson(e, depth + 1));
      return MakeList(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      auto d = std::make_shared<Dict>();
      d->items().reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) d->items().emplace_back(it.key(), FromJson(it.value(), depth + 1));
      return MakeDict(std::move(d));
    }
    default: return None();  // binary and discarded values do not occur in parsed JSON
  }
}

const void* Value::identity() const {
  switch (kind_) {
    case Kind::kList: return list_.get();
    case Kind::kDict:
    case Kind::kNamespace: return dict_.get();
    case Kind::kCallable: return fn_.get();
    default: return nullptr;
  }
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool:
    case Kind::kInt: return i_ != 0;
    case Kind::kFloat: return f_ != 0.0;
    case Kind::kString: return !s_.empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return dict_->size() != 0;
    case Kind::kNamespace:
    case Kind::kCallable: return true;
  }
  return false;
}

std::string Value::ToStr() const {
  if (kind_ == Kind::kString) return s_;
  std::string out;
  AppendStr(out);
  return out;
}

void Value::AppendStr(std::string& out) const {
  switch (kind_) {
    case Kind::kUndefined: return;
    case Kind::kString:
      CheckRoom(out.size() + s_.size());
      out += s_;
      return;
    default: AppendRepr(out);
  }
}

void AppendPythonFloat(double f, std::string& out) {
  if (std::isnan(f)) { out += "nan"; return; }
  if (std::isinf(f)) { out += f < 0 ? "-inf" : "inf"; return; }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);  // [-]d[.ddd]e[+-]XX
  bool negative = sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exp = std::atoi(std::string(sci.substr(e + 1)).c_str());
  if (negative) out += '-';
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    } else if (static_cast<int>(digits.size()) <= exp + 1) {
      out += digits;
      out.append(static_cast<size_t>(exp + 1 - static_cast<int>(digits.size())), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<size_t>(exp + 1));
      out += '.';
      out.append(digits, static_cast<size_t>(exp + 1), std::string::npos);
    }
    return;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  out += ebuf;
}

namespace {

bool IsPrintable(int32_t cp) {
  if (cp == ' ') return true;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
  }
}

}  // namespace

void AppendPythonStrRepr(std::string_view s, std::string& out) {
  char quote = '\'';
  if (s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos) quote = '"';
  out += quote;
  size_t i = 0;
  while (i < s.size()) {
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                              static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) {  // invalid byte: Python would hold a surrogate escape; show the byte
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
      continue;
    }
    if (cp == quote || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (!IsPrintable(cp)) {
      char buf[16];
      if (cp < 0x100) std::snprintf(buf, sizeof(buf), "\\x%02x", cp);
      else if (cp < 0x10000) std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
      else std::snprintf(buf, sizeof(buf), "\\U%08x", cp);
      out += buf;
    } else {
      out.append(s.data() + i, static_cast<size_t>(n));
    }
    i += static_cast<size_t>(n);
  }
  out += quote;
}

void Value::AppendRepr(std::string& out) const { AppendRepr(out, 0); }

void Value::AppendRepr(std::string& out, int depth) const {
  if (depth > kMaxJsonDepth) Fail(ErrorKind::kLimit, "maximum recursion depth exceeded while getting the repr of an object");
  switch (kind_) {
    case Kind::kUndefined: out += "Undefined"; return;
    case Kind::kNone: out += "None"; return;
    case Kind::kBool: out += i_ ? "True" : "False"; return;
    case Kind::kInt: out += std::to_string(i_); return;
    case Kind::kFloat: AppendPythonFloat(f_, out); return;
    case Kind::kString:
      CheckRoom(out.size() + s_.size());
      if (flag_) out += "Markup(";
      AppendPythonStrRepr(s_, out);
      if (flag_) out += ')';
      return;
    case Kind::kList: {
      out += flag_ ? '(' : '[';
      for (size_t k = 0; k < list_->size(); ++k) {
        if (k) out += ", ";
        (*list_)[k].AppendRepr(out, depth + 1);
        CheckRoom(out.size());
      }
      if (flag_ && list_->size() == 1) out += ',';
      out += flag_ ? ')' : ']';
      return;
    }
    case Kind::kDict:
    case Kind::kNamespace: {
      if (kind_ == Kind::kNamespace) out += "<Namespace ";
      out += '{';
      bool first = true;
      for (const auto& kv : dict_->items()) {
        if (!first) out += ", ";
        first = false;
        AppendPythonStrRepr(kv.first, out);
        out += ": ";
        kv.second.AppendRepr(out, depth + 1);
        CheckRoom(out.size());
      }
      out += '}';
      if (kind_ == Kind::kNamespace) out += '>';
      return;
    }
    case Kind::kCallable: out += "<function " + fn_->name + ">"; return;
  }
}

std::string Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return flag_ ? "tuple" : "list";
    case Kind::kDict: return "dict";
    case Kind::kNamespace: return "Namespace";
    case Kind::kCallable: return "function";
  }
  return "object";
}

}  // namespace lineage::jinja
