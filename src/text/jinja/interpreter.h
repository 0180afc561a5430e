// Interpreter: executes a parsed template against one context.
//
// Scoping follows Jinja: the template body and `if` blocks share one scope;
// each loop iteration, macro call, call block, filter block and block `set`
// gets a child scope whose lookups fall through to the scope it was created
// in (macros: the scope they were defined in, so they see the current value
// of top-level variables but not the caller's loop variables). Globals
// (range, namespace, dict, raise_exception, strftime_now) sit below the
// render context.
//
// One Interpreter renders one template once; it is not thread-safe. Limits
// on output size, macro recursion and loop iterations make every render
// finish.
#pragma once

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/value.h"

namespace lineage::jinja {

struct RenderLimits {
  size_t max_output_bytes = 64u << 20;
  int max_call_depth = 256;
  int64_t max_loop_iterations = 10'000'000;  // total over the render
};

class Scope : public std::enable_shared_from_this<Scope> {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) { vars_.reserve(4); }
  Value* Find(std::string_view name);
  void Set(const std::string& name, Value value);

 private:
  std::shared_ptr<Scope> parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};

class Interpreter {
 public:
  Interpreter(const RenderLimits& limits, const std::tm& now) : limits_(limits), now_(now) {}

  // context must be a dict (the keyword arguments of render()).
  std::string Render(const Body& body, const Value& context);

  Value Eval(const Expr& e, Scope& scope);
  Value Call(const Value& fn, CallArgs& args);
  // Jinja's sandboxed attribute and item lookup.
  Value GetAttr(const Value& obj, const std::string& name);
  Value GetItem(const Value& obj, const Value& key);
  const std::tm& now() const { return now_; }
  void CountIterations(int64_t n);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow Exec(const Body& body, Scope& scope, std::string& out);
  Flow ExecStmt(const Stmt& s, Scope& scope, std::string& out);
  Flow ExecFor(const Stmt& s, Scope& scope, std::string& out);
  void Assign(const Target& t, const Value& v, Scope& scope);
  Value MakeMacro(const Stmt& s, std::shared_ptr<Scope> scope);
  Value RenderBody(const Body& body, std::shared_ptr<Scope> parent);
  Value EvalInner(const Expr& e, Scope& scope);
  Value EvalCall(const Expr& e, Scope& scope);
  void EvalArgs(const Expr& e, size_t first, Scope& scope, CallArgs& args);
  Value ApplyFilterChain(const Expr& chain, const Value& input, Scope& scope);
  void CheckOutput(const std::string& out) const;

  RenderLimits limits_;
  std::tm now_;
  int call_depth_ = 0;
  int64_t iterations_ = 0;
  std::shared_ptr<Scope> globals_;
  std::vector<Value> filter_inputs_;  // the rendered body of enclosing filter blocks
};

}  // namespace lineage::jinja
