#include "text/jinja/ops.h"

#include <cmath>

#include "text/jinja/error.h"
#include "text/jinja/format.h"
#include "text/jinja/render_memory.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja {

void FailUndefined(const Value& undefined) {
  Fail(ErrorKind::kUndefined, undefined.str().empty() ? "value is undefined" : undefined.str());
}

int64_t TruncToInt(double f) {
  double t = std::trunc(f);
  // 2^63 is exact in a double; every double in [-2^63, 2^63) converts.
  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0)) {
    Fail(ErrorKind::kLimit, "integer overflow: the float does not fit in a 64-bit int");
  }
  return static_cast<int64_t>(t);
}

namespace {

bool IsIntLike(const Value& v) { return v.kind() == Kind::kInt || v.kind() == Kind::kBool; }

[[noreturn]] void FailOperands(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) FailUndefined(a);
  if (b.is_undefined()) FailUndefined(b);
  Fail(ErrorKind::kType, "unsupported operand type(s) for " + op + ": '" + a.TypeName() + "' and '" + b.TypeName() + "'");
}

// Python's ints are unbounded; ours are 64-bit. A result Python would give
// as a big int is a render error, never a wrapped value or a trap.
void CheckOverflow(bool overflow) {
  if (overflow) Fail(ErrorKind::kLimit, "integer overflow: the result does not fit in 64 bits");
}

// Python's int ** int for y >= 0, by squaring: at most 64 steps.
int64_t IntPow(int64_t x, int64_t y) {
  int64_t result = 1, base = x;
  for (uint64_t e = static_cast<uint64_t>(y); e; e >>= 1) {
    if (e & 1) CheckOverflow(__builtin_mul_overflow(result, base, &result));
    // Squaring overflows only when |base| >= 2 and a higher bit is left,
    // in which case the result would overflow too.
    if (e > 1) CheckOverflow(__builtin_mul_overflow(base, base, &base));
  }
  return result;
}

double FloorDiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

double FloatMod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

Value Repeat(const Value& seq, int64_t times) {
  size_t unit = seq.is_string() ? seq.str().size() : seq.list().size();
  if (times <= 0 || unit == 0) return seq.is_string() ? Value::String("") : Value::MakeList({}, seq.is_tuple());
  // Each list item copied charges at least sizeof(Value): check before reserving.
  CheckRoomFor(static_cast<uint64_t>(times), seq.is_string() ? unit : unit * sizeof(Value));
  const size_t n = static_cast<size_t>(times);
  if (seq.is_string()) {
    std::string out;
    out.reserve(unit * n);
    for (size_t k = 0; k < n; ++k) out += seq.str();
    return Value::String(std::move(out));
  }
  List out;
  out.reserve(unit * n);
  for (size_t k = 0; k < n; ++k) out.insert(out.end(), seq.list().begin(), seq.list().end());
  return Value::MakeList(std::move(out), seq.is_tuple());
}

Value Arith(const std::string& op, const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) FailOperands(op, a, b);
  if (IsIntLike(a) && IsIntLike(b)) {
    int64_t x = a.as_int(), y = b.as_int(), r = 0;
    if (op == "+") { CheckOverflow(__builtin_add_overflow(x, y, &r)); return Value::Int(r); }
    if (op == "-") { CheckOverflow(__builtin_sub_overflow(x, y, &r)); return Value::Int(r); }
    if (op == "*") { CheckOverflow(__builtin_mul_overflow(x, y, &r)); return Value::Int(r); }
    if (op == "/") {
      if (y == 0) Fail(ErrorKind::kType, "division by zero");
      return Value::Float(static_cast<double>(x) / static_cast<double>(y));
    }
    if (op == "//" || op == "%") {
      if (y == 0) Fail(ErrorKind::kType, "integer division or modulo by zero");
      // INT64_MIN / -1 traps in hardware; x // -1 is -x and x % -1 is 0.
      if (y == -1) {
        if (op == "%") return Value::Int(0);
        CheckOverflow(__builtin_sub_overflow(int64_t{0}, x, &r));
        return Value::Int(r);
      }
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) { q -= 1; m += y; }
      return Value::Int(op == "//" ? q : m);
    }
    if (op == "**") {
      if (y >= 0) return Value::Int(IntPow(x, y));
      if (x == 0) Fail(ErrorKind::kType, "0.0 cannot be raised to a negative power");
      return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
    }
  }
  double x = a.as_double(), y = b.as_double();
  if (op == "+") return Value::Float(x + y);
  if (op == "-") return Value::Float(x - y);
  if (op == "*") return Value::Float(x * y);
  if (op == "**") {
    if (x == 0 && y < 0) Fail(ErrorKind::kType, "0.0 cannot be raised to a negative power");
    return Value::Float(std::pow(x, y));
  }
  if (y == 0) Fail(ErrorKind::kType, "float division by zero");
  if (op == "/") return Value::Float(x / y);
  if (op == "//") return Value::Float(FloorDiv(x, y));
  return Value::Float(FloatMod(x, y));
}

}  // namespace

namespace {

// Python raises RecursionError comparing containers nested past its
// recursion limit; ours stop at the same depth the repr and tojson allow.
constexpr int kMaxCompareDepth = 512;

void CheckCompareDepth(int depth) {
  if (depth > kMaxCompareDepth) Fail(ErrorKind::kLimit, "maximum recursion depth exceeded in comparison");
}

bool PyEquals(const Value& a, const Value& b, int depth);
int PyCompare(const Value& a, const Value& b, int depth);

// Python compares container items with PyObject_RichCompareBool, which
// takes an object as equal to itself before comparing.
bool SameOrEqual(const Value& a, const Value& b, int depth) {
  const void* id = a.identity();
  if (id && id == b.identity()) return true;
  return PyEquals(a, b, depth);
}

}  // namespace

bool PyEquals(const Value& a, const Value& b) { return PyEquals(a, b, 0); }
int PyCompare(const Value& a, const Value& b) { return PyCompare(a, b, 0); }

namespace {

bool PyEquals(const Value& a, const Value& b, int depth) {
  CheckCompareDepth(depth);
  if (a.is_number() && b.is_number()) {
    if (IsIntLike(a) && IsIntLike(b)) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.str() == b.str();
    case Kind::kList: {
      if (a.is_tuple() != b.is_tuple() || a.list().size() != b.list().size()) return false;
      for (size_t k = 0; k < a.list().size(); ++k) {
        if (!SameOrEqual(a.list()[k], b.list()[k], depth + 1)) return false;
      }
      return true;
    }
    case Kind::kDict: {
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& kv : a.dict().items()) {
        const Value* other = b.dict().Find(kv.first);
        if (!other || !SameOrEqual(kv.second, *other, depth + 1)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

int PyCompare(const Value& a, const Value& b, int depth) {
  CheckCompareDepth(depth);
  if (a.is_number() && b.is_number()) {
    if (IsIntLike(a) && IsIntLike(b)) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.str().compare(b.str());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const List& x = a.list();
    const List& y = b.list();
    for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
      if (!SameOrEqual(x[k], y[k], depth + 1)) return PyCompare(x[k], y[k], depth + 1);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  if (a.is_undefined()) FailUndefined(a);
  if (b.is_undefined()) FailUndefined(b);
  Fail(ErrorKind::kType, "'<' not supported between instances of '" + a.TypeName() + "' and '" + b.TypeName() + "'");
}

}  // namespace

bool PyContains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::kString:
      if (!item.is_string()) {
        Fail(ErrorKind::kType, "'in <string>' requires string as left operand, not " + item.TypeName());
      }
      return container.str().find(item.str()) != std::string::npos;
    case Kind::kList:
      for (const Value& v : container.list()) {
        if (SameOrEqual(v, item, 0)) return true;
      }
      return false;
    case Kind::kDict:
      if (item.is_list() && !item.is_tuple()) Fail(ErrorKind::kType, "unhashable type: 'list'");
      return item.is_string() && container.dict().Find(item.str()) != nullptr;
    case Kind::kUndefined: return false;
    default: Fail(ErrorKind::kType, "argument of type '" + container.TypeName() + "' is not iterable");
  }
}

Value BinaryOp(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string s;
    a.AppendStr(s);
    b.AppendStr(s);
    return Value::String(std::move(s));
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      CheckRoom(a.str().size() + b.str().size());
      if (a.is_markup() == b.is_markup()) return Value::String(a.str() + b.str(), a.is_markup());
      // markupsafe escapes the plain operand of Markup + str.
      if (a.is_markup()) return Value::String(a.str() + HtmlEscape(b.str()), true);
      return Value::String(HtmlEscape(a.str()) + b.str(), true);
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      CheckRoom((a.list().size() + b.list().size()) * sizeof(Value));
      List out;
      out.reserve(a.list().size() + b.list().size());
      out.insert(out.end(), a.list().begin(), a.list().end());
      out.insert(out.end(), b.list().begin(), b.list().end());
      return Value::MakeList(std::move(out), a.is_tuple());
    }
    if (a.is_string() && !a.is_markup() && !b.is_undefined()) {
      Fail(ErrorKind::kType, "can only concatenate str (not \"" + b.TypeName() + "\") to str");
    }
    if (a.is_list() && !b.is_undefined()) {
      Fail(ErrorKind::kType, "can only concatenate " + a.TypeName() + " (not \"" + b.TypeName() + "\") to " + a.TypeName());
    }
    return Arith(op, a, b);
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && IsIntLike(b)) return Repeat(a, b.as_int());
    if (IsIntLike(a) && (b.is_string() || b.is_list())) return Repeat(b, a.as_int());
    return Arith(op, a, b);
  }
  if (op == "%" && a.is_string()) return Value::String(PercentFormat(a.str(), b));
  return Arith(op, a, b);
}

Value Negate(const Value& v, bool minus) {
  if (v.kind() == Kind::kInt || v.kind() == Kind::kBool) {
    if (!minus) return Value::Int(v.as_int());
    if (v.as_int() == INT64_MIN) Fail(ErrorKind::kType, "integer overflow");
    return Value::Int(-v.as_int());
  }
  if (v.kind() == Kind::kFloat) return Value::Float(minus ? -v.as_double() : v.as_double());
  if (v.is_undefined()) FailUndefined(v);
  Fail(ErrorKind::kType, std::string("bad operand type for unary ") + (minus ? "-" : "+") + ": '" + v.TypeName() + "'");
}

int64_t PyLen(const Value& v) {
  switch (v.kind()) {
    case Kind::kString: return static_cast<int64_t>(CodepointCount(v.str()));
    case Kind::kList: return static_cast<int64_t>(v.list().size());
    case Kind::kDict: return static_cast<int64_t>(v.dict().size());
    case Kind::kUndefined: return 0;
    default: Fail(ErrorKind::kType, "object of type '" + v.TypeName() + "' has no len()");
  }
}

std::vector<Value> PyIterate(const Value& v) {
  std::vector<Value> out;
  switch (v.kind()) {
    case Kind::kList: return v.list();
    case Kind::kDict:
      out.reserve(v.dict().size());
      for (const auto& kv : v.dict().items()) out.push_back(Value::String(kv.first));
      return out;
    case Kind::kString:
      for (size_t i = 0; i < v.str().size();) {
        int32_t cp;
        size_t n = DecodeAt(v.str(), i, &cp);
        out.push_back(Value::String(v.str().substr(i, n)));
        i += n;
      }
      return out;
    case Kind::kUndefined: return out;
    default: Fail(ErrorKind::kType, "'" + v.TypeName() + "' object is not iterable");
  }
}

Value PyIndex(const Value& obj, int64_t index) {
  if (obj.is_list()) {
    int64_t n = static_cast<int64_t>(obj.list().size());
    if (index < 0) index += n;
    if (index < 0 || index >= n) return Value::Undefined(obj.TypeName() + " object has no element " + std::to_string(index));
    return obj.list()[static_cast<size_t>(index)];
  }
  // String: index by code point.
  const std::string& s = obj.str();
  if (IsAscii(s)) {
    int64_t n = static_cast<int64_t>(s.size());
    if (index < 0) index += n;
    if (index < 0 || index >= n) return Value::Undefined("str object has no element " + std::to_string(index));
    return Value::String(s.substr(static_cast<size_t>(index), 1));
  }
  std::vector<int32_t> cps = ToCodepoints(s);
  int64_t n = static_cast<int64_t>(cps.size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return Value::Undefined("str object has no element " + std::to_string(index));
  std::string out;
  AppendUtf8(cps[static_cast<size_t>(index)], out);
  return Value::String(std::move(out));
}

Value PySlice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
              std::optional<int64_t> step) {
  int64_t st = step.value_or(1);
  if (st == 0) Fail(ErrorKind::kType, "slice step cannot be zero");
  if (st < -INT64_MAX) st = -INT64_MAX;  // as CPython clamps it
  bool ascii = obj.is_string() && IsAscii(obj.str());
  std::vector<int32_t> cps;
  int64_t n;
  if (obj.is_list()) n = static_cast<int64_t>(obj.list().size());
  else if (ascii) n = static_cast<int64_t>(obj.str().size());
  else { cps = ToCodepoints(obj.str()); n = static_cast<int64_t>(cps.size()); }
  // CPython's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= n) {
      x = st < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t b = adjust(start, st < 0 ? n - 1 : 0);
  int64_t e = adjust(stop, st < 0 ? -1 : n);
  // Counted rather than stepped, so that b + step never overflows.
  int64_t count = st > 0 ? (b < e ? (e - b - 1) / st + 1 : 0) : (b > e ? (b - e - 1) / -st + 1 : 0);
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) idx.push_back(b + k * st);
  if (obj.is_list()) {
    List out;
    out.reserve(idx.size());
    for (int64_t k : idx) out.push_back(obj.list()[static_cast<size_t>(k)]);
    return Value::MakeList(std::move(out), obj.is_tuple());
  }
  std::string out;
  for (int64_t k : idx) {
    if (ascii) out += obj.str()[static_cast<size_t>(k)];
    else AppendUtf8(cps[static_cast<size_t>(k)], out);
  }
  return Value::String(std::move(out));
}

}  // namespace lineage::jinja
