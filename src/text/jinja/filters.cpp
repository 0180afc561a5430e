// jinja2's builtin filters, with Hugging Face's json.dumps-style tojson.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "text/jinja/builtins.h"
#include "text/jinja/filters_seq.h"
#include "text/jinja/format.h"
#include "text/jinja/error.h"
#include "text/jinja/render_memory.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/json_dump.h"
#include "text/jinja/ops.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja {
namespace {

using namespace filters;  // NOLINT: the sequence filters registered below

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);

std::string Str(const Value& v) { return v.ToStr(); }

Value FAbs(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("abs", a, {});
  if (v.kind() == Kind::kFloat) return Value::Float(std::fabs(v.as_double()));
  if (v.is_number()) return Negate(v, v.as_int() < 0);
  Fail(ErrorKind::kType, "bad operand type for abs(): '" + v.TypeName() + "'");
}

Value FAttr(Interpreter& in, const Value& v, CallArgs& a) {
  ArgBinder b("attr", a, {"name"});
  if (!b.Get(0) || !b.Get(0)->is_string()) Fail(ErrorKind::kType, "attr() requires a name");
  // Attributes only: unlike `.name`, attr() does not fall back to dict items.
  if (v.is_dict() && !HasMethod(v, b.Get(0)->str())) return Value::Undefined("'dict object' has no attribute '" + b.Get(0)->str() + "'");
  return in.GetAttr(v, b.Get(0)->str());
}

Value FCapitalize(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("capitalize", a, {});
  return Value::String(PyCapitalize(Str(v)));
}

Value FCenter(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("center", a, {"width"});
  std::string s = Str(v);
  int64_t width = b.GetOr(0, Value::Int(80)).as_int();
  int64_t len = static_cast<int64_t>(CodepointCount(s));
  if (width <= len) return Value::String(s);
  int64_t marg = width - len;
  CheckRoom(s.size() + CheckRoomFor(static_cast<uint64_t>(marg), 1));
  int64_t left = marg / 2 + (marg & width & 1);
  return Value::String(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(marg - left), ' '));
}

Value FLength(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("length", a, {});
  return Value::Int(PyLen(v));
}

Value FDefault(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("default", a, {"default_value", "boolean"});
  bool boolean = b.GetOr(1, Value::Bool(false)).Truthy();
  if (v.is_undefined() || (boolean && !v.Truthy())) return b.GetOr(0, Value::String(""));
  return v;
}

Value FEscape(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("escape", a, {});
  if (v.is_markup()) return v;
  return Value::String(HtmlEscape(Str(v)), true);
}

Value FForceEscape(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("forceescape", a, {});
  return Value::String(HtmlEscape(Str(v)), true);
}

bool ParsePyInt(std::string s, int base, int64_t* out) {
  s = std::string(PyStrip(s, true, true));
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long r = std::strtoll(s.c_str(), &end, base);
  if (errno || *end) return false;
  *out = r;
  return true;
}

bool ParsePyFloat(const std::string& raw, double* out) {
  std::string s(PyStrip(raw, true, true));
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return *end == 0;
}

Value FInt(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("int", a, {"default", "base"});
  Value def = b.GetOr(0, Value::Int(0));
  int base = static_cast<int>(b.GetOr(1, Value::Int(10)).as_int());
  if (v.kind() == Kind::kInt || v.kind() == Kind::kBool) return Value::Int(v.as_int());
  if (v.kind() == Kind::kFloat) {
    double f = v.as_double();
    if (std::isnan(f) || std::isinf(f)) return def;
    return Value::Int(TruncToInt(f));
  }
  if (v.is_string()) {
    int64_t i;
    if (ParsePyInt(v.str(), base, &i)) return Value::Int(i);
    double f;
    if (ParsePyFloat(v.str(), &f) && std::isfinite(f)) return Value::Int(TruncToInt(f));
  }
  return def;
}

Value FFloat(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("float", a, {"default"});
  if (v.is_number()) return Value::Float(v.as_double());
  double f;
  if (v.is_string() && ParsePyFloat(v.str(), &f)) return Value::Float(f);
  return b.GetOr(0, Value::Float(0.0));
}

Value FIndent(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("indent", a, {"width", "first", "blank"});
  Value w = b.GetOr(0, Value::Int(4));
  std::string indent = w.is_string() ? w.str() : std::string(CheckRoomFor(static_cast<uint64_t>(std::max<int64_t>(0, w.as_int())), 1), ' ');
  bool first = b.GetOr(1, Value::Bool(false)).Truthy();
  bool blank = b.GetOr(2, Value::Bool(false)).Truthy();
  std::string s = Str(v);
  std::vector<std::string> lines = PySplit(s, std::string("\n"), -1);
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k) out += '\n';
    bool add = k == 0 ? first : (blank || !PyStrip(lines[k], true, true).empty());
    if (add) out += indent;
    out += lines[k];
    CheckRoom(out.size());
  }
  return Value::String(std::move(out));
}

Value FLower(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("lower", a, {});
  return Value::String(PyLower(Str(v)));
}

Value FUpper(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("upper", a, {});
  return Value::String(PyUpper(Str(v)));
}

Value FReplace(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("replace", a, {"old", "new", "count"});
  if (!b.Get(0) || !b.Get(1)) Fail(ErrorKind::kType, "replace() missing required arguments");
  Value count = b.GetOr(2, Value::None());
  auto out = PyReplace(Str(v), b.Get(0)->ToStr(), b.Get(1)->ToStr(), count.is_none() ? -1 : count.as_int(),
                       RoomLeft());
  if (!out) FailOutOfRoom();
  return Value::String(std::move(*out));
}

Value FRound(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("round", a, {"precision", "method"});
  int64_t precision = b.GetOr(0, Value::Int(0)).as_int();
  std::string method = b.GetOr(1, Value::String("common")).ToStr();
  if (method != "common" && method != "ceil" && method != "floor") {
    Fail(ErrorKind::kType, "method must be 'common', 'ceil' or 'floor'");
  }
  if (!v.is_number()) Fail(ErrorKind::kType, "type " + v.TypeName() + " doesn't define __round__ method");
  if (method == "common" && v.kind() != Kind::kFloat) return Value::Int(v.as_int());
  double scale = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_double() * scale;
  double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
  return Value::Float(r / scale);
}

Value FSafe(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("safe", a, {});
  return Value::String(Str(v), true);
}

Value FString(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("string", a, {});
  if (v.is_string()) return v;
  return Value::String(Str(v));
}

// jinja2's title filter: capitalise each word split on whitespace, -, (, {, [, <.
Value FTitle(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("title", a, {});
  std::string s = Str(v);
  std::string out;
  bool word_start = true;
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    size_t n = DecodeAt(s, i, &cp);
    bool sep = IsPySpace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    if (sep) {
      out.append(s, i, n);
      word_start = true;
    } else {
      std::string piece(s, i, n);
      out += word_start ? PyUpper(piece) : PyLower(piece);
      word_start = false;
    }
    i += n;
  }
  return Value::String(std::move(out));
}

Value FToJson(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("tojson", a, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions o;
  o.ensure_ascii = b.GetOr(0, Value::Bool(false)).Truthy();
  Value indent = b.GetOr(1, Value::None());
  if (indent.is_string()) {
    o.has_indent_text = true;
    o.indent_text = indent.str();
  } else if (indent.kind() == Kind::kInt || indent.kind() == Kind::kBool) {
    o.indent = static_cast<int64_t>(CheckRoomFor(static_cast<uint64_t>(std::max<int64_t>(0, indent.as_int())), 1));
  } else if (!indent.is_none()) {
    Fail(ErrorKind::kType, "indent must be an int, a string or None");
  }
  if (o.indent >= 0 || o.has_indent_text) o.item_separator = ",";
  Value seps = b.GetOr(2, Value::None());
  if (!seps.is_none()) {
    if (!seps.is_list() || seps.list().size() != 2) Fail(ErrorKind::kType, "separators must be a pair of strings");
    o.item_separator = seps.list()[0].ToStr();
    o.key_separator = seps.list()[1].ToStr();
  }
  o.sort_keys = b.GetOr(3, Value::Bool(false)).Truthy();
  std::string out;
  DumpJson(v, o, out);
  return Value::String(std::move(out));
}

Value FTrim(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("trim", a, {"chars"});
  std::string s = Str(v);
  const Value* chars = b.Get(0);
  if (chars && !chars->is_none()) return Value::String(PyStripChars(s, chars->ToStr(), true, true));
  return Value::String(std::string(PyStrip(s, true, true)));
}

Value FWordcount(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("wordcount", a, {});
  int64_t n = 0;
  bool in_word = false;
  std::string s = Str(v);
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    i += DecodeAt(s, i, &cp);
    bool word = cp == '_' || (cp < 0x80 ? std::isalnum(cp) != 0 : !IsPySpace(cp));
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value::Int(n);
}

// jinja2: value % (kwargs or args).
Value FFormat(Interpreter&, const Value& v, CallArgs& a) {
  if (!a.positional.empty() && !a.keyword.empty()) {
    Fail(ErrorKind::kType, "can't handle positional and keyword arguments at the same time");
  }
  if (!a.keyword.empty()) {
    auto d = std::make_shared<Dict>();
    for (const auto& kv : a.keyword) d->Set(kv.first, kv.second);
    return Value::String(PercentFormat(Str(v), Value::MakeDict(std::move(d))));
  }
  return Value::String(PercentFormat(Str(v), Value::MakeList(a.positional, true)));
}

Value FUnsupported(Interpreter&, const Value&, CallArgs&) {
  Fail(ErrorKind::kType, "this jinja2 filter is not supported");
}

const std::unordered_map<std::string_view, FilterFn>& Filters() {
  static const std::unordered_map<std::string_view, FilterFn> kFilters = {
      {"abs", FAbs}, {"attr", FAttr}, {"capitalize", FCapitalize}, {"center", FCenter},
      {"count", FLength}, {"length", FLength}, {"d", FDefault}, {"default", FDefault},
      {"dictsort", FDictsort}, {"e", FEscape}, {"escape", FEscape}, {"forceescape", FForceEscape},
      {"first", FFirst}, {"last", FLast}, {"float", FFloat}, {"int", FInt}, {"indent", FIndent},
      {"items", FItems}, {"join", FJoin}, {"list", FList}, {"lower", FLower}, {"upper", FUpper},
      {"map", FMap}, {"select", FSelect}, {"reject", FReject}, {"selectattr", FSelectAttr},
      {"rejectattr", FRejectAttr}, {"max", FMax}, {"min", FMin}, {"replace", FReplace},
      {"reverse", FReverse}, {"round", FRound}, {"safe", FSafe}, {"sort", FSort},
      {"string", FString}, {"sum", FSum}, {"title", FTitle}, {"tojson", FToJson}, {"trim", FTrim},
      {"unique", FUnique}, {"wordcount", FWordcount},
      // jinja2 builtins that chat templates do not use: they exist (so a
      // template naming them parses) but fail when applied.
      {"batch", FUnsupported}, {"filesizeformat", FUnsupported}, {"format", FFormat},
      {"groupby", FUnsupported}, {"pprint", FUnsupported}, {"random", FUnsupported},
      {"slice", FUnsupported}, {"striptags", FUnsupported}, {"truncate", FUnsupported},
      {"urlencode", FUnsupported}, {"urlize", FUnsupported}, {"wordwrap", FUnsupported},
      {"xmlattr", FUnsupported},
  };
  return kFilters;
}

}  // namespace

bool HasFilter(std::string_view name) { return Filters().count(name) != 0; }

Value ApplyFilter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args) {
  auto it = Filters().find(name);
  if (it == Filters().end()) Fail(ErrorKind::kType, "No filter named '" + name + "'");
  return it->second(in, input, args);
}

}  // namespace lineage::jinja
