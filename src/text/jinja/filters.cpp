// jinja2's builtin filters, with Hugging Face's json.dumps-style tojson.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/json_dump.h"
#include "text/jinja/ops.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja {
namespace {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);

std::string Str(const Value& v) { return v.ToStr(); }

// jinja2's make_attrgetter: "a.b.0" looks up each part with getitem.
Value GetAttribute(Interpreter& in, Value item, const Value& attribute) {
  if (!attribute.is_string()) return in.GetItem(item, attribute);
  std::string_view path = attribute.str();
  size_t pos = 0;
  while (true) {
    size_t dot = path.find('.', pos);
    std::string part(path.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos));
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    item = numeric ? in.GetItem(item, Value::Int(std::stoll(part))) : in.GetItem(item, Value::String(part));
    if (dot == std::string_view::npos) return item;
    pos = dot + 1;
  }
}

// Sort key for filters with case_sensitive=False: strings compare lowered.
Value CaseKey(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(PyLower(v.str()));
  return v;
}

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

Value FDictsort(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("dictsort", a, {"case_sensitive", "by", "reverse"});
  if (!v.is_dict()) Fail(ErrorKind::kType, "You can only sort by either \"key\" or \"value\"");
  bool cs = b.GetOr(0, Value::Bool(false)).Truthy();
  std::string by = b.GetOr(1, Value::String("key")).ToStr();
  bool reverse = b.GetOr(2, Value::Bool(false)).Truthy();
  if (by != "key" && by != "value") Fail(ErrorKind::kType, "You can only sort by either \"key\" or \"value\"");
  List pairs;
  for (const auto& kv : v.dict().items()) pairs.push_back(Value::MakeList({Value::String(kv.first), kv.second}, true));
  size_t idx = by == "key" ? 0 : 1;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    int c = PyCompare(CaseKey(x.list()[idx], cs), CaseKey(y.list()[idx], cs));
    return reverse ? c > 0 : c < 0;
  });
  return Value::MakeList(std::move(pairs));
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

Value FFirst(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("first", a, {});
  std::vector<Value> items = PyIterate(v);
  if (items.empty()) return Value::Undefined("No first item, sequence was empty.");
  return items.front();
}

Value FLast(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("last", a, {});
  if (v.is_undefined()) return Value::Undefined("No last item, sequence was empty.");
  if (!v.is_list() && !v.is_string() && !v.is_dict()) Fail(ErrorKind::kType, "'" + v.TypeName() + "' object is not reversible");
  std::vector<Value> items = PyIterate(v);
  if (items.empty()) return Value::Undefined("No last item, sequence was empty.");
  return items.back();
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
    return Value::Int(static_cast<int64_t>(f));
  }
  if (v.is_string()) {
    int64_t i;
    if (ParsePyInt(v.str(), base, &i)) return Value::Int(i);
    double f;
    if (ParsePyFloat(v.str(), &f) && std::isfinite(f)) return Value::Int(static_cast<int64_t>(f));
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
  std::string indent = w.is_string() ? w.str() : std::string(static_cast<size_t>(std::max<int64_t>(0, w.as_int())), ' ');
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
  }
  return Value::String(std::move(out));
}

Value FItems(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("items", a, {});
  if (v.is_undefined()) return Value::MakeList();
  if (!v.is_dict()) Fail(ErrorKind::kType, "Can only get item pairs from a mapping.");
  List out;
  out.reserve(v.dict().size());
  for (const auto& kv : v.dict().items()) out.push_back(Value::MakeList({Value::String(kv.first), kv.second}, true));
  return Value::MakeList(std::move(out));
}

Value FJoin(Interpreter& in, const Value& v, CallArgs& a) {
  ArgBinder b("join", a, {"d", "attribute"});
  std::string sep = b.GetOr(0, Value::String("")).ToStr();
  const Value* attribute = b.Get(1);
  std::string out;
  bool first = true;
  for (Value& item : PyIterate(v)) {
    if (!first) out += sep;
    first = false;
    if (attribute && !attribute->is_none()) GetAttribute(in, item, *attribute).AppendStr(out);
    else item.AppendStr(out);
    CheckStringSize(out.size());
  }
  return Value::String(std::move(out));
}

Value FList(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("list", a, {});
  return Value::MakeList(PyIterate(v));
}

Value FLower(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("lower", a, {});
  return Value::String(PyLower(Str(v)));
}

Value FUpper(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("upper", a, {});
  return Value::String(PyUpper(Str(v)));
}

Value FMap(Interpreter& in, const Value& v, CallArgs& a) {
  std::vector<Value> items = PyIterate(v);
  List out;
  out.reserve(items.size());
  if (a.positional.empty()) {
    const Value* attribute = nullptr;
    Value def = Value::None();
    bool has_default = false;
    for (auto& kv : a.keyword) {
      if (kv.first == "attribute") attribute = &kv.second;
      else if (kv.first == "default") { def = kv.second; has_default = true; }
      else Fail(ErrorKind::kType, "Unexpected keyword argument '" + kv.first + "'");
    }
    if (!attribute) Fail(ErrorKind::kType, "map requires a filter argument");
    for (Value& item : items) {
      Value r = GetAttribute(in, item, *attribute);
      if (has_default && r.is_undefined()) r = def;
      out.push_back(std::move(r));
    }
    return Value::MakeList(std::move(out));
  }
  std::string name = a.positional[0].ToStr();
  if (!HasFilter(name)) Fail(ErrorKind::kType, "No filter named '" + name + "'");
  for (Value& item : items) {
    CallArgs rest;
    rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    rest.keyword = a.keyword;
    out.push_back(ApplyFilter(in, name, item, rest));
  }
  return Value::MakeList(std::move(out));
}

Value SelectImpl(Interpreter& in, const Value& v, CallArgs& a, bool by_attr, bool keep) {
  std::vector<Value> items = PyIterate(v);
  size_t first = 0;
  const Value* attribute = nullptr;
  if (by_attr) {
    if (a.positional.empty()) Fail(ErrorKind::kType, "Missing parameter for attribute name");
    attribute = &a.positional[0];
    first = 1;
  }
  std::string test;
  CallArgs test_args;
  if (a.positional.size() > first) {
    test = a.positional[first].ToStr();
    if (!HasTest(test)) Fail(ErrorKind::kType, "No test named '" + test + "'");
    test_args.positional.assign(a.positional.begin() + static_cast<long>(first) + 1, a.positional.end());
    test_args.keyword = a.keyword;
  }
  List out;
  for (Value& item : items) {
    Value subject = attribute ? GetAttribute(in, item, *attribute) : item;
    bool ok;
    if (test.empty()) {
      ok = subject.Truthy();
    } else {
      CallArgs args = test_args;
      ok = ApplyTest(in, test, subject, args);
    }
    if (ok == keep) out.push_back(std::move(item));
  }
  return Value::MakeList(std::move(out));
}

Value FSelect(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, false, true); }
Value FReject(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, false, false); }
Value FSelectAttr(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, true, true); }
Value FRejectAttr(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, true, false); }

Value MinMax(Interpreter& in, const Value& v, CallArgs& a, bool want_max) {
  ArgBinder b(want_max ? "max" : "min", a, {"case_sensitive", "attribute"});
  bool cs = b.GetOr(0, Value::Bool(false)).Truthy();
  const Value* attribute = b.Get(1);
  std::vector<Value> items = PyIterate(v);
  if (items.empty()) return Value::Undefined(std::string("No aggregated item, sequence was empty."));
  auto key = [&](const Value& x) {
    return CaseKey(attribute && !attribute->is_none() ? GetAttribute(in, x, *attribute) : x, cs);
  };
  size_t best = 0;
  for (size_t k = 1; k < items.size(); ++k) {
    int c = PyCompare(key(items[k]), key(items[best]));
    if (want_max ? c > 0 : c < 0) best = k;
  }
  return items[best];
}

Value FMax(Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, true); }
Value FMin(Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, false); }

Value FReplace(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("replace", a, {"old", "new", "count"});
  if (!b.Get(0) || !b.Get(1)) Fail(ErrorKind::kType, "replace() missing required arguments");
  Value count = b.GetOr(2, Value::None());
  auto out = PyReplace(Str(v), b.Get(0)->ToStr(), b.Get(1)->ToStr(), count.is_none() ? -1 : count.as_int(),
                       kMaxStringBytes);
  if (!out) CheckStringSize(kMaxStringBytes + 1);
  return Value::String(std::move(*out));
}

Value FReverse(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("reverse", a, {});
  if (v.is_string()) {
    std::vector<int32_t> cps = ToCodepoints(v.str());
    std::reverse(cps.begin(), cps.end());
    return Value::String(FromCodepoints(cps));
  }
  std::vector<Value> items = PyIterate(v);
  std::reverse(items.begin(), items.end());
  return Value::MakeList(std::move(items));
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

Value FSort(Interpreter& in, const Value& v, CallArgs& a) {
  ArgBinder b("sort", a, {"reverse", "case_sensitive", "attribute"});
  bool reverse = b.GetOr(0, Value::Bool(false)).Truthy();
  bool cs = b.GetOr(1, Value::Bool(false)).Truthy();
  const Value* attribute = b.Get(2);
  std::vector<Value> items = PyIterate(v);
  auto key = [&](const Value& x) {
    return CaseKey(attribute && !attribute->is_none() ? GetAttribute(in, x, *attribute) : x, cs);
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    int c = PyCompare(key(x), key(y));
    return reverse ? c > 0 : c < 0;
  });
  return Value::MakeList(std::move(items));
}

Value FString(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("string", a, {});
  if (v.is_string()) return v;
  return Value::String(Str(v));
}

Value FSum(Interpreter& in, const Value& v, CallArgs& a) {
  ArgBinder b("sum", a, {"attribute", "start"});
  const Value* attribute = b.Get(0);
  Value total = b.GetOr(1, Value::Int(0));
  for (Value& item : PyIterate(v)) {
    total = BinaryOp("+", total, attribute && !attribute->is_none() ? GetAttribute(in, item, *attribute) : item);
  }
  return total;
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
    o.indent = static_cast<int>(std::max<int64_t>(0, indent.as_int()));
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

Value FUnique(Interpreter& in, const Value& v, CallArgs& a) {
  ArgBinder b("unique", a, {"case_sensitive", "attribute"});
  bool cs = b.GetOr(0, Value::Bool(false)).Truthy();
  const Value* attribute = b.Get(1);
  List out;
  std::vector<Value> seen;
  for (Value& item : PyIterate(v)) {
    Value key = CaseKey(attribute && !attribute->is_none() ? GetAttribute(in, item, *attribute) : item, cs);
    bool dup = false;
    for (const Value& s : seen) dup = dup || PyEquals(s, key);
    if (!dup) {
      seen.push_back(key);
      out.push_back(std::move(item));
    }
  }
  return Value::MakeList(std::move(out));
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
      {"batch", FUnsupported}, {"filesizeformat", FUnsupported}, {"format", FUnsupported},
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
