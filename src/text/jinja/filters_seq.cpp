#include "text/jinja/filters_seq.h"

#include <algorithm>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/render_memory.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/ops.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja::filters {
namespace {

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

}  // namespace

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
    CheckRoom(out.size());
  }
  return Value::String(std::move(out));
}

Value FList(Interpreter&, const Value& v, CallArgs& a) {
  ArgBinder b("list", a, {});
  return Value::MakeList(PyIterate(v));
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

Value FSelect(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, false, true); }

Value FReject(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, false, false); }

Value FSelectAttr(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, true, true); }

Value FRejectAttr(Interpreter& in, const Value& v, CallArgs& a) { return SelectImpl(in, v, a, true, false); }

Value FMax(Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, true); }

Value FMin(Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, false); }

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

Value FSum(Interpreter& in, const Value& v, CallArgs& a) {
  ArgBinder b("sum", a, {"attribute", "start"});
  const Value* attribute = b.Get(0);
  Value total = b.GetOr(1, Value::Int(0));
  for (Value& item : PyIterate(v)) {
    total = BinaryOp("+", total, attribute && !attribute->is_none() ? GetAttribute(in, item, *attribute) : item);
  }
  return total;
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

}  // namespace lineage::jinja::filters
