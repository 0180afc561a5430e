// The builtin filters, tests, global functions and Python methods (of str,
// dict and list) that templates may use. The set mirrors jinja2's builtins
// plus the chat-template additions of Hugging Face transformers (a tojson
// that is json.dumps, raise_exception, strftime_now). Methods that mutate a
// list or dict are refused, as jinja2's ImmutableSandboxedEnvironment does,
// unless the render allows mutation (jinja2's SandboxedEnvironment).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "text/jinja/value.h"

namespace lineage::jinja {

class Interpreter;
class Scope;

bool HasFilter(std::string_view name);
bool HasTest(std::string_view name);
Value ApplyFilter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args);
bool ApplyTest(Interpreter& in, const std::string& name, const Value& input, CallArgs& args);

// Whether Python's getattr(obj, name) finds a method (str, dict, list).
bool HasMethod(const Value& obj, std::string_view name);
// list.append, dict.update, ...: refused unless the render allows mutation.
bool IsMutatingMethod(const Value& obj, std::string_view name);
// Run one of them on obj (shared with every holder of the list or dict).
Value MutateList(const Value& obj, const std::string& name, CallArgs& args);
Value MutateDict(const Value& obj, const std::string& name, CallArgs& args);
Value CallMethod(Interpreter& in, const Value& obj, const std::string& name, CallArgs& args);

void InstallGlobals(Scope& globals);

// Binds call arguments to parameter names the way Python does for
// f(a, b=..., ...): positional first, then by keyword. Throws TypeError for
// unknown keywords or too many positional arguments.
class ArgBinder {
 public:
  ArgBinder(const std::string& fn_name, CallArgs& args, std::initializer_list<const char*> params);
  // The argument for parameter k, or nullptr when not given.
  const Value* Get(size_t k) const { return bound_[k]; }
  Value GetOr(size_t k, Value fallback) const { return bound_[k] ? *bound_[k] : std::move(fallback); }

 private:
  std::vector<const Value*> bound_;
};

}  // namespace lineage::jinja
