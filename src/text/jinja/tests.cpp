// jinja2's builtin tests (`x is defined`, `x is mapping`, ...).
#include <cmath>
#include <unordered_map>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/ops.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja {
namespace {

using TestFn = bool (*)(const Value&, CallArgs&);

const Value& Arg(CallArgs& a, const char* test) {
  ArgBinder b(test, a, {"other"});
  if (!b.Get(0)) Fail(ErrorKind::kType, std::string(test) + "() missing 1 required positional argument");
  return *b.Get(0);
}

void NoArgs(CallArgs& a, const char* test) { ArgBinder b(test, a, {}); }

bool TDefined(const Value& v, CallArgs& a) { NoArgs(a, "defined"); return !v.is_undefined(); }
bool TUndefined(const Value& v, CallArgs& a) { NoArgs(a, "undefined"); return v.is_undefined(); }
bool TNone(const Value& v, CallArgs& a) { NoArgs(a, "none"); return v.is_none(); }
bool TBoolean(const Value& v, CallArgs& a) { NoArgs(a, "boolean"); return v.kind() == Kind::kBool; }
bool TTrue(const Value& v, CallArgs& a) { NoArgs(a, "true"); return v.kind() == Kind::kBool && v.as_bool(); }
bool TFalse(const Value& v, CallArgs& a) { NoArgs(a, "false"); return v.kind() == Kind::kBool && !v.as_bool(); }
bool TString(const Value& v, CallArgs& a) { NoArgs(a, "string"); return v.is_string(); }
bool TMapping(const Value& v, CallArgs& a) { NoArgs(a, "mapping"); return v.is_dict(); }
bool TNumber(const Value& v, CallArgs& a) { NoArgs(a, "number"); return v.is_number(); }
bool TInteger(const Value& v, CallArgs& a) { NoArgs(a, "integer"); return v.kind() == Kind::kInt; }
bool TFloat(const Value& v, CallArgs& a) { NoArgs(a, "float"); return v.kind() == Kind::kFloat; }
bool TCallable(const Value& v, CallArgs& a) { NoArgs(a, "callable"); return v.kind() == Kind::kCallable; }
bool TEscaped(const Value& v, CallArgs& a) { NoArgs(a, "escaped"); return v.is_markup(); }
// Python: iter(x) succeeds. Undefined defines __iter__, so it is iterable.
bool TIterable(const Value& v, CallArgs& a) {
  NoArgs(a, "iterable");
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
// jinja2: len(x) and x.__getitem__ both exist (str, list, tuple, dict).
bool TSequence(const Value& v, CallArgs& a) {
  NoArgs(a, "sequence");
  return v.is_string() || v.is_list() || v.is_dict();
}
bool TLower(const Value& v, CallArgs& a) {
  NoArgs(a, "lower");
  std::string s = v.ToStr();
  return PyLower(s) == s;
}
bool TUpper(const Value& v, CallArgs& a) {
  NoArgs(a, "upper");
  std::string s = v.ToStr();
  return PyUpper(s) == s;
}
int64_t IntOf(const Value& v) {
  if (v.kind() == Kind::kInt || v.kind() == Kind::kBool) return v.as_int();
  if (v.kind() == Kind::kFloat) return TruncToInt(v.as_double());
  if (v.is_undefined()) FailUndefined(v);
  Fail(ErrorKind::kType, "unsupported operand type(s) for %: '" + v.TypeName() + "' and 'int'");
}
bool TOdd(const Value& v, CallArgs& a) { NoArgs(a, "odd"); return IntOf(v) % 2 != 0; }
bool TEven(const Value& v, CallArgs& a) { NoArgs(a, "even"); return IntOf(v) % 2 == 0; }
bool TDivisibleBy(const Value& v, CallArgs& a) {
  int64_t d = IntOf(Arg(a, "divisibleby"));
  if (d == 0) Fail(ErrorKind::kType, "integer division or modulo by zero");
  if (d == -1) return true;  // INT64_MIN % -1 traps in hardware
  return IntOf(v) % d == 0;
}
bool TEq(const Value& v, CallArgs& a) { return PyEquals(v, Arg(a, "eq")); }
bool TNe(const Value& v, CallArgs& a) { return !PyEquals(v, Arg(a, "ne")); }
bool TLt(const Value& v, CallArgs& a) { return PyCompare(v, Arg(a, "lt")) < 0; }
bool TLe(const Value& v, CallArgs& a) { return PyCompare(v, Arg(a, "le")) <= 0; }
bool TGt(const Value& v, CallArgs& a) { return PyCompare(v, Arg(a, "gt")) > 0; }
bool TGe(const Value& v, CallArgs& a) { return PyCompare(v, Arg(a, "ge")) >= 0; }
bool TIn(const Value& v, CallArgs& a) { return PyContains(Arg(a, "in"), v); }
bool TSameAs(const Value& v, CallArgs& a) {
  const Value& o = Arg(a, "sameas");
  if (v.kind() != o.kind()) return false;
  if (v.identity()) return v.identity() == o.identity();
  return PyEquals(v, o);  // None, bools and small values are singletons in CPython
}
bool TFilter(const Value& v, CallArgs& a) { NoArgs(a, "filter"); return v.is_string() && HasFilter(v.str()); }
bool TTest(const Value& v, CallArgs& a) { NoArgs(a, "test"); return v.is_string() && HasTest(v.str()); }

const std::unordered_map<std::string_view, TestFn>& Tests() {
  static const std::unordered_map<std::string_view, TestFn> kTests = {
      {"defined", TDefined}, {"undefined", TUndefined}, {"none", TNone}, {"boolean", TBoolean},
      {"true", TTrue}, {"false", TFalse}, {"string", TString}, {"mapping", TMapping},
      {"number", TNumber}, {"integer", TInteger}, {"float", TFloat}, {"callable", TCallable},
      {"escaped", TEscaped}, {"iterable", TIterable}, {"sequence", TSequence}, {"lower", TLower},
      {"upper", TUpper}, {"odd", TOdd}, {"even", TEven}, {"divisibleby", TDivisibleBy},
      {"eq", TEq}, {"equalto", TEq}, {"==", TEq}, {"ne", TNe}, {"!=", TNe},
      {"lt", TLt}, {"lessthan", TLt}, {"<", TLt}, {"le", TLe}, {"<=", TLe},
      {"gt", TGt}, {"greaterthan", TGt}, {">", TGt}, {"ge", TGe}, {">=", TGe},
      {"in", TIn}, {"sameas", TSameAs}, {"filter", TFilter}, {"test", TTest},
  };
  return kTests;
}

}  // namespace

bool HasTest(std::string_view name) { return Tests().count(name) != 0; }

bool ApplyTest(Interpreter&, const std::string& name, const Value& input, CallArgs& args) {
  auto it = Tests().find(name);
  if (it == Tests().end()) Fail(ErrorKind::kType, "No test named '" + name + "'");
  return it->second(input, args);
}

}  // namespace lineage::jinja
