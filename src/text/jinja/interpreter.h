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

#include <cstdint>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/value.h"

namespace lineage::jinja {

struct RenderLimits {
  // Everything a render holds counts against one budget as it grows: the
  // values it makes (strings by their bytes, every value by its size), dict
  // keys and the output (render_memory.h). At most kMaxBudgetBytes.
  size_t max_memory_bytes = 256u << 20;
  // The rendered text on its own (also counted in max_memory_bytes).
  size_t max_output_bytes = 64u << 20;
  int max_call_depth = 256;
  int max_eval_depth = 2000;  // nested expression evaluations, across macro calls
  // Native stack the render may use below its entry. Frame sizes differ
  // between builds (a sanitizer's are several times a release build's), so
  // the depth counts above are not enough on their own; 2 MiB leaves most
  // of an 8 MiB thread stack to the caller.
  size_t max_stack_bytes = 2u << 20;
  int64_t max_loop_iterations = 10'000'000;  // total over the render
};

// Text a body renders, charged to the render's memory budget as it grows.
struct Output {
  Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output();
  void Append(std::string_view piece);
  // The text, its charge released (the Value it becomes charges it again).
  std::string Take();

  std::string text;
  size_t charged_bytes = 0;
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
  // allow_mutation: list.append, dict.update and the other mutating methods
  // work (jinja2's SandboxedEnvironment) instead of being refused
  // (ImmutableSandboxedEnvironment, what transformers uses).
  Interpreter(const RenderLimits& limits, const std::tm& now, bool allow_mutation = false)
      : limits_(limits), now_(now), allow_mutation_(allow_mutation) {}

  // context must be a dict (the keyword arguments of render()).
  std::string Render(const Body& body, const Value& context);

  Value Eval(const Expr& e, Scope& scope);
  Value Call(const Value& fn, CallArgs& args);
  // Jinja's sandboxed attribute and item lookup.
  Value GetAttr(const Value& obj, const std::string& name);
  Value GetItem(const Value& obj, const Value& key);
  const std::tm& now() const { return now_; }
  bool allow_mutation() const { return allow_mutation_; }
  void CountIterations(int64_t n);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow Exec(const Body& body, Scope& scope, Output& out);
  Flow ExecStmt(const Stmt& s, Scope& scope, Output& out);
  Flow ExecFor(const Stmt& s, Scope& scope, Output& out);
  // Appends str(v) to out, charged and checked against the limits.
  void Emit(const Value& v, Output& out);
  void Assign(const Target& t, const Value& v, Scope& scope);
  Value MakeMacro(const Stmt& s, std::shared_ptr<Scope> scope);
  Value RenderBody(const Body& body, std::shared_ptr<Scope> parent);
  Value EvalInner(const Expr& e, Scope& scope);
  Value EvalCall(const Expr& e, Scope& scope);
  void EvalArgs(const Expr& e, size_t first, Scope& scope, CallArgs& args);
  Value ApplyFilterChain(const Expr& chain, const Value& input, Scope& scope);
  void CheckOutputSize(size_t bytes) const;

  RenderLimits limits_;
  std::tm now_;
  bool allow_mutation_;
  int call_depth_ = 0;
  int eval_depth_ = 0;
  uintptr_t stack_base_ = 0;  // the frame address at Render's entry
  int64_t iterations_ = 0;
  std::shared_ptr<Scope> globals_;
  std::vector<Value> filter_inputs_;  // the rendered body of enclosing filter blocks
};

}  // namespace lineage::jinja
