// Global functions: jinja2's range, namespace and dict, and the chat-template
// additions raise_exception and strftime_now.
#include <ctime>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/interpreter.h"

namespace lineage::jinja {

ArgBinder::ArgBinder(const std::string& fn_name, CallArgs& args, std::initializer_list<const char*> params)
    : bound_(params.size(), nullptr) {
  if (args.positional.size() > params.size()) {
    Fail(ErrorKind::kType, fn_name + "() takes at most " + std::to_string(params.size()) + " argument(s) (" +
                               std::to_string(args.positional.size()) + " given)");
  }
  for (size_t k = 0; k < args.positional.size(); ++k) bound_[k] = &args.positional[k];
  for (const auto& kv : args.keyword) {
    size_t k = 0;
    for (const char* p : params) {
      if (kv.first == p) break;
      ++k;
    }
    if (k == params.size()) Fail(ErrorKind::kType, fn_name + "() got an unexpected keyword argument '" + kv.first + "'");
    if (bound_[k]) Fail(ErrorKind::kType, fn_name + "() got multiple values for argument '" + kv.first + "'");
    bound_[k] = &kv.second;
  }
}

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2.sandbox.MAX_RANGE

int64_t IntArg(const Value& v) {
  if (v.kind() != Kind::kInt && v.kind() != Kind::kBool) {
    Fail(ErrorKind::kType, "'" + v.TypeName() + "' object cannot be interpreted as an integer");
  }
  return v.as_int();
}

Value Range(Interpreter& in, CallArgs& a) {
  if (!a.keyword.empty()) Fail(ErrorKind::kType, "range() takes no keyword arguments");
  if (a.positional.empty() || a.positional.size() > 3) Fail(ErrorKind::kType, "range expected 1 to 3 arguments");
  int64_t start = 0, stop, step = 1;
  if (a.positional.size() == 1) {
    stop = IntArg(a.positional[0]);
  } else {
    start = IntArg(a.positional[0]);
    stop = IntArg(a.positional[1]);
    if (a.positional.size() == 3) step = IntArg(a.positional[2]);
  }
  if (step == 0) Fail(ErrorKind::kType, "range() arg 3 must not be zero");
  // In 128 bits: stop - start and the step's magnitude may not fit in 64.
  using Wide = __int128;
  Wide span = step > 0 ? Wide{stop} - start : Wide{start} - stop;
  Wide magnitude = step > 0 ? Wide{step} : -Wide{step};
  Wide wide_n = span > 0 ? (span + magnitude - 1) / magnitude : 0;
  int64_t n = wide_n > kMaxRange ? kMaxRange + 1 : static_cast<int64_t>(wide_n);
  if (n > kMaxRange) {
    Fail(ErrorKind::kLimit, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  in.CountIterations(n);
  List out;
  out.reserve(static_cast<size_t>(n));
  // Every item lies between start and stop, so start + k * step fits.
  for (int64_t k = 0; k < n; ++k) out.push_back(Value::Int(static_cast<int64_t>(Wide{start} + Wide{k} * step)));
  return Value::MakeList(std::move(out));
}

std::shared_ptr<Dict> DictFromArgs(CallArgs& a, const char* fn) {
  auto d = std::make_shared<Dict>();
  if (a.positional.size() > 1) Fail(ErrorKind::kType, std::string(fn) + " expected at most 1 argument");
  if (!a.positional.empty()) {
    const Value& src = a.positional[0];
    if (src.is_dict()) {
      for (const auto& kv : src.dict().items()) d->Set(kv.first, kv.second);
    } else if (src.is_list()) {
      for (const Value& pair : src.list()) {
        if (!pair.is_list() || pair.list().size() != 2 || !pair.list()[0].is_string()) {
          Fail(ErrorKind::kType, std::string(fn) + ": sequence elements must be (str, value) pairs");
        }
        d->Set(pair.list()[0].str(), pair.list()[1]);
      }
    } else {
      Fail(ErrorKind::kType, "'" + src.TypeName() + "' object is not iterable");
    }
  }
  for (const auto& kv : a.keyword) d->Set(kv.first, kv.second);
  return d;
}

Value Namespace(Interpreter&, CallArgs& a) { return Value::MakeNamespace(DictFromArgs(a, "namespace")); }
Value DictFn(Interpreter&, CallArgs& a) { return Value::MakeDict(DictFromArgs(a, "dict")); }

Value RaiseException(Interpreter&, CallArgs& a) {
  std::string message = a.positional.empty() ? std::string() : a.positional[0].ToStr();
  throw RenderError(ErrorKind::kRaised, Pos{}, message);
}

Value StrftimeNow(Interpreter& in, CallArgs& a) {
  ArgBinder b("strftime_now", a, {"format"});
  if (!b.Get(0) || !b.Get(0)->is_string()) Fail(ErrorKind::kType, "strftime_now() needs a format string");
  const std::string& fmt = b.Get(0)->str();
  if (fmt.empty()) return Value::String("");
  std::string buf(256 + fmt.size() * 8, '\0');
  size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &in.now());
  buf.resize(n);
  return Value::String(std::move(buf));
}

}  // namespace

void InstallGlobals(Scope& globals) {
  globals.Set("range", Value::MakeCallable("range", Range));
  globals.Set("namespace", Value::MakeCallable("namespace", Namespace));
  globals.Set("dict", Value::MakeCallable("dict", DictFn));
  globals.Set("raise_exception", Value::MakeCallable("raise_exception", RaiseException));
  globals.Set("strftime_now", Value::MakeCallable("strftime_now", StrftimeNow));
}

}  // namespace lineage::jinja
