// The mutating methods of list and dict (append, pop, insert, extend,
// remove, clear, sort, reverse; pop, update, setdefault, clear, popitem), for
// renders that allow them (jinja2's SandboxedEnvironment).
#include <algorithm>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/ops.h"

namespace lineage::jinja {

bool IsMutatingMethod(const Value& obj, std::string_view name) {
  if (obj.is_dict()) return name == "pop" || name == "update" || name == "setdefault" || name == "clear" || name == "popitem";
  if (obj.is_list() && !obj.is_tuple()) {
    return name == "append" || name == "pop" || name == "insert" || name == "extend" || name == "remove" ||
           name == "clear" || name == "sort" || name == "reverse";
  }
  return false;
}

Value MutateDict(const Value& obj, const std::string& name, CallArgs& a) {
  Dict& d = obj.dict();
  auto& items = d.items();
  if (name == "pop" || name == "setdefault") {
    ArgBinder b(name, a, {"key", "default"});
    if (!b.Get(0) || !b.Get(0)->is_string()) Fail(ErrorKind::kType, name + "() needs a string key");
    const std::string& key = b.Get(0)->str();
    for (size_t k = 0; k < items.size(); ++k) {
      if (items[k].first != key) continue;
      Value v = items[k].second;
      if (name == "pop") items.erase(items.begin() + static_cast<long>(k));
      return v;
    }
    if (name == "setdefault") {
      Value v = b.GetOr(1, Value::None());
      d.Set(key, v);
      return v;
    }
    if (!b.Get(1)) Fail(ErrorKind::kType, "KeyError: '" + key + "'");
    return *b.Get(1);
  }
  if (name == "update") {
    if (a.positional.size() > 1) Fail(ErrorKind::kType, "update expected at most 1 argument");
    if (!a.positional.empty()) {
      if (!a.positional[0].is_dict()) Fail(ErrorKind::kType, "update() needs a dict");
      for (const auto& kv : a.positional[0].dict().items()) d.Set(kv.first, kv.second);
    }
    for (const auto& kv : a.keyword) d.Set(kv.first, kv.second);
    return Value::None();
  }
  if (name == "clear") {
    ArgBinder b(name, a, {});
    items.clear();
    return Value::None();
  }
  ArgBinder b(name, a, {});  // popitem
  if (items.empty()) Fail(ErrorKind::kType, "popitem(): dictionary is empty");
  Value pair = Value::MakeList({Value::String(items.back().first), items.back().second}, true);
  items.pop_back();
  return pair;
}

Value MutateList(const Value& obj, const std::string& name, CallArgs& a) {
  List& l = obj.list();
  auto index = [&](const Value* v, int64_t def, bool insert) {
    int64_t n = static_cast<int64_t>(l.size());
    int64_t i = v ? v->as_int() : def;
    if (v && v->kind() != Kind::kInt && v->kind() != Kind::kBool) Fail(ErrorKind::kType, "list indices must be integers");
    if (i < 0) i += n;
    if (insert) return std::clamp<int64_t>(i, 0, n);
    if (i < 0 || i >= n) Fail(ErrorKind::kType, l.empty() ? "pop from empty list" : "pop index out of range");
    return i;
  };
  if (name == "append") {
    ArgBinder b(name, a, {"object"});
    if (!b.Get(0)) Fail(ErrorKind::kType, "append() takes exactly one argument (0 given)");
    if (l.size() >= (1u << 22)) Fail(ErrorKind::kLimit, "list too large");
    l.push_back(*b.Get(0));
    return Value::None();
  }
  if (name == "pop") {
    ArgBinder b(name, a, {"index"});
    int64_t i = index(b.Get(0), -1, false);
    Value v = l[static_cast<size_t>(i)];
    l.erase(l.begin() + static_cast<long>(i));
    return v;
  }
  if (name == "insert") {
    ArgBinder b(name, a, {"index", "object"});
    if (!b.Get(0) || !b.Get(1)) Fail(ErrorKind::kType, "insert expected 2 arguments");
    l.insert(l.begin() + static_cast<long>(index(b.Get(0), 0, true)), *b.Get(1));
    return Value::None();
  }
  if (name == "extend") {
    ArgBinder b(name, a, {"iterable"});
    if (!b.Get(0)) Fail(ErrorKind::kType, "extend() takes exactly one argument (0 given)");
    std::vector<Value> more = PyIterate(*b.Get(0));
    if (l.size() + more.size() > (1u << 22)) Fail(ErrorKind::kLimit, "list too large");
    l.insert(l.end(), more.begin(), more.end());
    return Value::None();
  }
  if (name == "remove") {
    ArgBinder b(name, a, {"value"});
    for (size_t k = 0; b.Get(0) && k < l.size(); ++k) {
      if (PyEquals(l[k], *b.Get(0))) {
        l.erase(l.begin() + static_cast<long>(k));
        return Value::None();
      }
    }
    Fail(ErrorKind::kType, "list.remove(x): x not in list");
  }
  if (name == "clear") {
    ArgBinder b(name, a, {});
    l.clear();
    return Value::None();
  }
  if (name == "reverse") {
    ArgBinder b(name, a, {});
    std::reverse(l.begin(), l.end());
    return Value::None();
  }
  ArgBinder b(name, a, {"reverse"});  // sort
  bool reverse = b.GetOr(0, Value::Bool(false)).Truthy();
  std::stable_sort(l.begin(), l.end(), [&](const Value& x, const Value& y) {
    int c = PyCompare(x, y);
    return reverse ? c > 0 : c < 0;
  });
  return Value::None();
}

}  // namespace lineage::jinja
