// Python methods of str, dict and list reachable from templates
// (`content.split('</think>')[0]`, `message.get('name')`, `tools.index(t)`).
#include <algorithm>
#include <unordered_set>

#include <utf8proc.h>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/render_memory.h"
#include "text/jinja/format.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/ops.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja {
namespace {

const std::unordered_set<std::string_view>& StrMethods() {
  static const std::unordered_set<std::string_view> k = {
      "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "upper",
      "lower", "title", "capitalize", "find", "rfind", "index", "rindex", "count", "join", "isdigit",
      "isalpha", "isalnum", "isspace", "isupper", "islower", "splitlines", "removeprefix",
      "removesuffix", "partition", "rpartition", "zfill", "ljust", "rjust", "center", "format"};
  return k;
}
const std::unordered_set<std::string_view>& DictMethods() {
  static const std::unordered_set<std::string_view> k = {
      "items", "keys", "values", "get", "copy", "pop", "update", "setdefault", "clear", "popitem"};
  return k;
}
const std::unordered_set<std::string_view>& ListMethods() {
  static const std::unordered_set<std::string_view> k = {
      "index", "count", "copy", "append", "pop", "insert", "extend", "remove", "clear", "sort", "reverse"};
  return k;
}

std::string StrArg(const Value* v, const char* what) {
  if (!v || !v->is_string()) Fail(ErrorKind::kType, std::string(what) + " must be str, not " + (v ? v->TypeName() : "nothing"));
  return v->str();
}

std::optional<std::string> OptStr(const Value* v) {
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) Fail(ErrorKind::kType, "must be str or None, not " + v->TypeName());
  return v->str();
}

Value Strings(const std::vector<std::string>& parts) {
  List out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(Value::String(p));
  return Value::MakeList(std::move(out));
}

template <typename Pred>
bool AllCodepoints(const std::string& s, Pred pred) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    i += DecodeAt(s, i, &cp);
    if (!pred(cp)) return false;
  }
  return true;
}

bool IsAlpha(int32_t cp) {
  auto c = utf8proc_category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_LO;
}
bool IsDigitCp(int32_t cp) { return utf8proc_category(cp) == UTF8PROC_CATEGORY_ND; }

Value Pad(const std::string& s, int64_t width, const std::string& fill, int where) {
  int64_t len = static_cast<int64_t>(CodepointCount(s));
  if (width <= len) return Value::String(s);
  int64_t marg = width - len;
  CheckRoom(s.size() + CheckRoomFor(static_cast<uint64_t>(marg), fill.size()));
  int64_t left = where < 0 ? 0 : where > 0 ? marg : marg / 2 + (marg & width & 1);
  std::string out;
  for (int64_t k = 0; k < left; ++k) out += fill;
  out += s;
  for (int64_t k = 0; k < marg - left; ++k) out += fill;
  return Value::String(std::move(out));
}

Value StrMethod(Interpreter&, const std::string& s, const std::string& name, CallArgs& a) {
  if (name == "startswith" || name == "endswith") {
    ArgBinder b(name, a, {"prefix"});
    if (!b.Get(0)) Fail(ErrorKind::kType, name + "() takes at least 1 argument (0 given)");
    std::vector<std::string> options;
    if (b.Get(0)->is_list() && b.Get(0)->is_tuple()) {
      for (const Value& v : b.Get(0)->list()) options.push_back(StrArg(&v, "tuple item"));
    } else {
      options.push_back(StrArg(b.Get(0), name == "startswith" ? "startswith first arg" : "endswith first arg"));
    }
    for (const auto& o : options) {
      if (name == "startswith" ? s.compare(0, o.size(), o) == 0 && s.size() >= o.size()
                               : s.size() >= o.size() && s.compare(s.size() - o.size(), o.size(), o) == 0) {
        return Value::Bool(true);
      }
    }
    return Value::Bool(false);
  }
  if (name == "split" || name == "rsplit") {
    ArgBinder b(name, a, {"sep", "maxsplit"});
    std::optional<std::string> sep = OptStr(b.Get(0));
    if (sep && sep->empty()) Fail(ErrorKind::kType, "empty separator");
    int64_t maxsplit = b.GetOr(1, Value::Int(-1)).as_int();
    return Strings(name == "split" ? PySplit(s, sep, maxsplit) : PyRsplit(s, sep, maxsplit));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    ArgBinder b(name, a, {"chars"});
    bool left = name != "rstrip", right = name != "lstrip";
    std::optional<std::string> chars = OptStr(b.Get(0));
    if (chars) return Value::String(PyStripChars(s, *chars, left, right));
    return Value::String(std::string(PyStrip(s, left, right)));
  }
  if (name == "replace") {
    ArgBinder b(name, a, {"old", "new", "count"});
    auto out = PyReplace(s, StrArg(b.Get(0), "replace() argument 1"), StrArg(b.Get(1), "replace() argument 2"),
                         b.GetOr(2, Value::Int(-1)).as_int(), RoomLeft());
    if (!out) FailOutOfRoom();
    return Value::String(std::move(*out));
  }
  if (name == "upper") { ArgBinder b(name, a, {}); return Value::String(PyUpper(s)); }
  if (name == "lower") { ArgBinder b(name, a, {}); return Value::String(PyLower(s)); }
  if (name == "title") { ArgBinder b(name, a, {}); return Value::String(PyTitle(s)); }
  if (name == "capitalize") { ArgBinder b(name, a, {}); return Value::String(PyCapitalize(s)); }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    ArgBinder b(name, a, {"sub"});
    std::string sub = StrArg(b.Get(0), "must be str");
    int64_t r = (name == "find" || name == "index") ? PyFind(s, sub) : PyRfind(s, sub);
    if (r < 0 && (name == "index" || name == "rindex")) Fail(ErrorKind::kType, "substring not found");
    return Value::Int(r);
  }
  if (name == "count") {
    ArgBinder b(name, a, {"sub"});
    return Value::Int(PyCount(s, StrArg(b.Get(0), "must be str")));
  }
  if (name == "join") {
    ArgBinder b(name, a, {"iterable"});
    if (!b.Get(0)) Fail(ErrorKind::kType, "join() takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const Value& v : PyIterate(*b.Get(0))) {
      if (!first) out += s;
      first = false;
      out += StrArg(&v, "sequence item");
    }
    return Value::String(std::move(out));
  }
  if (name == "isdigit") { ArgBinder b(name, a, {}); return Value::Bool(AllCodepoints(s, IsDigitCp)); }
  if (name == "isalpha") { ArgBinder b(name, a, {}); return Value::Bool(AllCodepoints(s, IsAlpha)); }
  if (name == "isalnum") {
    ArgBinder b(name, a, {});
    return Value::Bool(AllCodepoints(s, [](int32_t cp) { return IsAlpha(cp) || IsDigitCp(cp); }));
  }
  if (name == "isspace") { ArgBinder b(name, a, {}); return Value::Bool(AllCodepoints(s, IsPySpace)); }
  if (name == "isupper" || name == "islower") {
    ArgBinder b(name, a, {});
    bool cased = false;
    for (size_t i = 0; i < s.size();) {
      int32_t cp;
      i += DecodeAt(s, i, &cp);
      bool up = utf8proc_tolower(cp) != cp, low = utf8proc_toupper(cp) != cp;
      if ((name == "isupper" && low) || (name == "islower" && up)) return Value::Bool(false);
      cased = cased || up || low;
    }
    return Value::Bool(cased);
  }
  if (name == "splitlines") {
    ArgBinder b(name, a, {"keepends"});
    bool keep = b.GetOr(0, Value::Bool(false)).Truthy();
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n' || s[i] == '\r') {
        size_t end = i;
        if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
        lines.push_back(s.substr(start, (keep ? i + 1 : end) - start));
        start = i + 1;
      }
    }
    if (start < s.size()) lines.push_back(s.substr(start));
    return Strings(lines);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    ArgBinder b(name, a, {"affix"});
    std::string affix = StrArg(b.Get(0), name.c_str());
    if (name == "removeprefix" && s.compare(0, affix.size(), affix) == 0) return Value::String(s.substr(affix.size()));
    if (name == "removesuffix" && !affix.empty() && s.size() >= affix.size() &&
        s.compare(s.size() - affix.size(), affix.size(), affix) == 0) {
      return Value::String(s.substr(0, s.size() - affix.size()));
    }
    return Value::String(s);
  }
  if (name == "partition" || name == "rpartition") {
    ArgBinder b(name, a, {"sep"});
    std::string sep = StrArg(b.Get(0), "sep");
    if (sep.empty()) Fail(ErrorKind::kType, "empty separator");
    size_t f = name == "partition" ? s.find(sep) : s.rfind(sep);
    if (f == std::string::npos) {
      return name == "partition"
                 ? Value::MakeList({Value::String(s), Value::String(""), Value::String("")}, true)
                 : Value::MakeList({Value::String(""), Value::String(""), Value::String(s)}, true);
    }
    return Value::MakeList({Value::String(s.substr(0, f)), Value::String(sep), Value::String(s.substr(f + sep.size()))}, true);
  }
  if (name == "zfill") {
    ArgBinder b(name, a, {"width"});
    int64_t width = b.GetOr(0, Value::Int(0)).as_int();
    int64_t len = static_cast<int64_t>(CodepointCount(s));
    if (width <= len) return Value::String(s);
    size_t sign = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
    size_t zeros = CheckRoomFor(static_cast<uint64_t>(width - len), 1);
    CheckRoom(s.size() + zeros);
    return Value::String(s.substr(0, sign) + std::string(zeros, '0') + s.substr(sign));
  }
  if (name == "ljust" || name == "rjust" || name == "center") {
    ArgBinder b(name, a, {"width", "fillchar"});
    std::string fill = b.GetOr(1, Value::String(" ")).ToStr();
    if (CodepointCount(fill) != 1) Fail(ErrorKind::kType, "The fill character must be exactly one character long");
    return Pad(s, b.GetOr(0, Value::Int(0)).as_int(), fill, name == "ljust" ? -1 : name == "rjust" ? 1 : 0);
  }
  Fail(ErrorKind::kType, "str." + name + "() is not supported");
}

[[noreturn]] void FailUnsafe(const Value& obj, const std::string& name) {
  Fail(ErrorKind::kSecurity, "access to attribute '" + name + "' of '" + obj.TypeName() + "' object is unsafe.");
}

Value DictMethod(Interpreter& in, const Value& obj, const std::string& name, CallArgs& a) {
  if (IsMutatingMethod(obj, name)) {
    if (!in.allow_mutation()) FailUnsafe(obj, name);
    return MutateDict(obj, name, a);
  }
  const Dict& d = obj.dict();
  if (name == "items" || name == "keys" || name == "values") {
    ArgBinder b(name, a, {});
    List out;
    out.reserve(d.size());
    for (const auto& kv : d.items()) {
      if (name == "items") out.push_back(Value::MakeList({Value::String(kv.first), kv.second}, true));
      else if (name == "keys") out.push_back(Value::String(kv.first));
      else out.push_back(kv.second);
    }
    return Value::MakeList(std::move(out));
  }
  if (name == "get") {
    ArgBinder b(name, a, {"key", "default"});
    if (!b.Get(0)) Fail(ErrorKind::kType, "get expected at least 1 argument, got 0");
    if (b.Get(0)->is_string()) {
      if (const Value* v = d.Find(b.Get(0)->str())) return *v;
    }
    return b.GetOr(1, Value::None());
  }
  if (name == "copy") {
    ArgBinder b(name, a, {});
    return Value::MakeDict(std::make_shared<Dict>(d));
  }
  FailUnsafe(obj, name);
}

Value ListMethod(Interpreter& in, const Value& obj, const std::string& name, CallArgs& a) {
  if (IsMutatingMethod(obj, name)) {
    if (!in.allow_mutation()) FailUnsafe(obj, name);
    return MutateList(obj, name, a);
  }
  const List& l = obj.list();
  if (name == "index" || name == "count") {
    ArgBinder b(name, a, {"value"});
    if (!b.Get(0)) Fail(ErrorKind::kType, name + "() takes exactly one argument (0 given)");
    int64_t n = 0;
    for (size_t k = 0; k < l.size(); ++k) {
      if (PyEquals(l[k], *b.Get(0))) {
        if (name == "index") return Value::Int(static_cast<int64_t>(k));
        ++n;
      }
    }
    if (name == "index") Fail(ErrorKind::kType, "value is not in list");
    return Value::Int(n);
  }
  if (name == "copy") {
    ArgBinder b(name, a, {});
    return Value::MakeList(l, obj.is_tuple());
  }
  FailUnsafe(obj, name);
}

}  // namespace


bool HasMethod(const Value& obj, std::string_view name) {
  switch (obj.kind()) {
    case Kind::kString: return StrMethods().count(name) != 0;
    case Kind::kDict: return DictMethods().count(name) != 0;
    case Kind::kList:
      if (obj.is_tuple()) return name == "index" || name == "count";
      return ListMethods().count(name) != 0;
    default: return false;
  }
}

Value CallMethod(Interpreter& in, const Value& obj, const std::string& name, CallArgs& args) {
  switch (obj.kind()) {
    case Kind::kString:
      if (name == "format") return Value::String(StrFormat(obj.str(), args));
      return StrMethod(in, obj.str(), name, args);
    case Kind::kDict: return DictMethod(in, obj, name, args);
    case Kind::kList: return ListMethod(in, obj, name, args);
    default: Fail(ErrorKind::kType, "'" + obj.TypeName() + "' object has no attribute '" + name + "'");
  }
}

}  // namespace lineage::jinja
