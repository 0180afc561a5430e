#include "text/jinja/interpreter.h"

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/ops.h"
#include "text/jinja/render_memory.h"

namespace lineage::jinja {

Value* Scope::Find(std::string_view name) {
  for (Scope* s = this; s; s = s->parent_.get()) {
    for (auto& kv : s->vars_) {
      if (kv.first == name) return &kv.second;
    }
  }
  return nullptr;
}

void Scope::Set(const std::string& name, Value value) {
  for (auto& kv : vars_) {
    if (kv.first == name) {
      kv.second = std::move(value);
      return;
    }
  }
  vars_.emplace_back(name, std::move(value));
}

Output::~Output() { ReleaseRenderBytes(charged_bytes); }

void Output::Append(std::string_view piece) {
  if (ChargeRenderBytes(piece.size())) charged_bytes += piece.size();
  text += piece;
}

std::string Output::Take() {
  ReleaseRenderBytes(charged_bytes);
  charged_bytes = 0;
  return std::move(text);
}

std::string Interpreter::Render(const Body& body, const Value& context) {
  stack_base_ = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  RenderMemory memory(limits_.max_memory_bytes);
  RenderMemory::Use use(&memory);
  globals_ = std::make_shared<Scope>(nullptr);
  InstallGlobals(*globals_);
  auto root = std::make_shared<Scope>(globals_);
  if (context.is_dict()) {
    for (const auto& kv : context.dict().items()) root->Set(kv.first, kv.second);
  }
  Output out;
  Exec(body, *root, out);
  std::string text = out.Take();
  // The values die with the budget still installed, so that their releases
  // land in it and not in a later render's.
  root.reset();
  globals_.reset();
  return text;
}

void Interpreter::Emit(const Value& v, Output& out) {
  if (v.is_string()) {
    CheckOutputSize(out.text.size() + v.str().size());
    out.Append(v.str());
  } else {
    std::string piece;
    v.AppendStr(piece);
    CheckOutputSize(out.text.size() + piece.size());
    out.Append(piece);
  }
}

void Interpreter::CheckOutputSize(size_t bytes) const {
  if (bytes > limits_.max_output_bytes) {
    Fail(ErrorKind::kOutputLimit, "output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
  }
}

void Interpreter::CountIterations(int64_t n) {
  iterations_ += n;
  if (iterations_ > limits_.max_loop_iterations) Fail(ErrorKind::kLimit, "too many loop iterations");
}

Interpreter::Flow Interpreter::Exec(const Body& body, Scope& scope, Output& out) {
  for (const StmtPtr& s : body) {
    Flow f;
    try {
      f = ExecStmt(*s, scope, out);
    } catch (RenderError& err) {
      if (err.pos().line == 0) err.set_pos(s->pos);
      throw;
    }
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Value Interpreter::RenderBody(const Body& body, std::shared_ptr<Scope> parent) {
  auto child = std::make_shared<Scope>(std::move(parent));
  Output out;
  Exec(body, *child, out);
  return Value::String(out.Take());
}

Interpreter::Flow Interpreter::ExecStmt(const Stmt& s, Scope& scope, Output& out) {
  switch (s.kind) {
    case StmtKind::kOutput:
      CheckOutputSize(out.text.size() + s.text.size());
      out.Append(s.text);
      return Flow::kNormal;
    case StmtKind::kPrint:
      Emit(Eval(*s.expr, scope), out);
      return Flow::kNormal;
    case StmtKind::kIf:
      if (Eval(*s.expr, scope).Truthy()) return Exec(s.body, scope, out);
      return Exec(s.else_body, scope, out);
    case StmtKind::kFor: return ExecFor(s, scope, out);
    case StmtKind::kSet: Assign(s.target, Eval(*s.expr, scope), scope); return Flow::kNormal;
    case StmtKind::kSetBlock: {
      Value v = RenderBody(s.body, scope.shared_from_this());
      if (s.expr) v = ApplyFilterChain(*s.expr, v, scope);
      Assign(s.target, v, scope);
      return Flow::kNormal;
    }
    case StmtKind::kMacro: scope.Set(s.name, MakeMacro(s, scope.shared_from_this())); return Flow::kNormal;
    case StmtKind::kCallBlock: {
      const Expr& call = *s.expr;
      Value fn = Eval(*call.args[0], scope);
      CallArgs args;
      EvalArgs(call, 1, scope, args);
      args.keyword.emplace_back("caller", MakeMacro(s, scope.shared_from_this()));
      Emit(Call(fn, args), out);
      return Flow::kNormal;
    }
    case StmtKind::kFilterBlock: {
      Value body = RenderBody(s.body, scope.shared_from_this());
      Emit(ApplyFilterChain(*s.expr, body, scope), out);
      return Flow::kNormal;
    }
    case StmtKind::kScope: {
      // Values are computed in the enclosing scope, then bound in the new one.
      auto child = std::make_shared<Scope>(scope.shared_from_this());
      for (const Param& p : s.params) child->Set(p.name, Eval(*p.default_value, scope));
      Flow f = Exec(s.body, *child, out);
      return f;
    }
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
  }
  return Flow::kNormal;
}

Value Interpreter::ApplyFilterChain(const Expr& chain, const Value& input, Scope& scope) {
  filter_inputs_.push_back(input);
  struct Pop {
    std::vector<Value>* v;
    ~Pop() { v->pop_back(); }
  } pop{&filter_inputs_};
  return Eval(chain, scope);
}

void Interpreter::Assign(const Target& t, const Value& v, Scope& scope) {
  if (!t.attr.empty()) {
    Value* ns = scope.Find(t.names[0]);
    if (!ns || ns->kind() != Kind::kNamespace) Fail(ErrorKind::kType, "cannot assign attribute on non-namespace object");
    ns->dict().Set(t.attr, v);
    return;
  }
  if (!t.is_tuple) {
    scope.Set(t.names[0], v);
    return;
  }
  std::vector<Value> items = PyIterate(v);
  if (items.size() != t.names.size()) {
    Fail(ErrorKind::kType, items.size() > t.names.size()
                               ? "too many values to unpack (expected " + std::to_string(t.names.size()) + ")"
                               : "not enough values to unpack (expected " + std::to_string(t.names.size()) + ", got " +
                                     std::to_string(items.size()) + ")");
  }
  for (size_t k = 0; k < items.size(); ++k) scope.Set(t.names[k], items[k]);
}

Interpreter::Flow Interpreter::ExecFor(const Stmt& s, Scope& scope, Output& out) {
  std::shared_ptr<Scope> parent = scope.shared_from_this();
  std::vector<Value> items = PyIterate(Eval(*s.expr, scope));
  CountIterations(static_cast<int64_t>(items.size()));
  if (s.filter) {
    std::vector<Value> kept;
    for (Value& item : items) {
      auto tmp = std::make_shared<Scope>(parent);
      Assign(s.target, item, *tmp);
      if (Eval(*s.filter, *tmp).Truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    auto child = std::make_shared<Scope>(parent);
    return Exec(s.else_body, *child, out) == Flow::kBreak ? Flow::kBreak : Flow::kNormal;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  auto index = std::make_shared<int64_t>(0);
  Value loop = Value::MakeNamespace();
  auto& f = loop.dict().items();
  enum { kIndex, kIndex0, kRevindex, kRevindex0, kFirst, kLast, kLength, kPrev, kNext, kDepth, kDepth0, kCycle };
  for (const char* name : {"index", "index0", "revindex", "revindex0", "first", "last", "length", "previtem",
                           "nextitem", "depth", "depth0", "cycle"}) {
    f.emplace_back(name, Value());
  }
  f[kLength].second = Value::Int(n);
  f[kDepth].second = Value::Int(1);
  f[kDepth0].second = Value::Int(0);
  f[kCycle].second = Value::MakeCallable("loop.cycle", [index](Interpreter&, CallArgs& a) {
    if (a.positional.empty()) Fail(ErrorKind::kType, "no items for cycling given");
    return a.positional[static_cast<size_t>(*index % static_cast<int64_t>(a.positional.size()))];
  });
  for (int64_t k = 0; k < n; ++k) {
    *index = k;
    f[kIndex].second = Value::Int(k + 1);
    f[kIndex0].second = Value::Int(k);
    f[kRevindex].second = Value::Int(n - k);
    f[kRevindex0].second = Value::Int(n - k - 1);
    f[kFirst].second = Value::Bool(k == 0);
    f[kLast].second = Value::Bool(k == n - 1);
    f[kPrev].second = k > 0 ? items[static_cast<size_t>(k - 1)] : Value::Undefined("there is no previous item");
    f[kNext].second = k + 1 < n ? items[static_cast<size_t>(k + 1)] : Value::Undefined("there is no next item");
    auto iter_scope = std::make_shared<Scope>(parent);
    Assign(s.target, items[static_cast<size_t>(k)], *iter_scope);
    iter_scope->Set("loop", loop);
    if (Exec(s.body, *iter_scope, out) == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Value Interpreter::MakeMacro(const Stmt& s, std::shared_ptr<Scope> scope) {
  // A weak reference: the macro is usually stored in the very scope it
  // captures, and a strong one would make a cycle.
  std::weak_ptr<Scope> weak = scope;
  const Stmt* stmt = &s;
  std::string name = s.kind == StmtKind::kCallBlock ? "caller" : s.name;
  return Value::MakeCallable(name, [stmt, weak, name](Interpreter& in, CallArgs& a) -> Value {
    if (in.call_depth_ >= in.limits_.max_call_depth) {
      Fail(ErrorKind::kLimit, "maximum macro recursion depth exceeded in '" + name + "'");
    }
    std::shared_ptr<Scope> parent = weak.lock();
    if (!parent) parent = in.globals_;
    auto sc = std::make_shared<Scope>(parent);
    const auto& params = stmt->params;
    List varargs;
    for (size_t k = params.size(); k < a.positional.size(); ++k) varargs.push_back(a.positional[k]);
    if (!varargs.empty() && !stmt->uses_varargs) {
      Fail(ErrorKind::kType, "macro '" + name + "' takes not more than " + std::to_string(params.size()) + " argument(s)");
    }
    auto kwargs = std::make_shared<Dict>();
    for (auto& kv : a.keyword) {
      bool is_param = false;
      for (const Param& p : params) is_param = is_param || p.name == kv.first;
      if (kv.first == "caller" && stmt->uses_caller) sc->Set("caller", kv.second);
      else if (!is_param && !stmt->uses_kwargs) Fail(ErrorKind::kType, "macro '" + name + "' takes no keyword argument '" + kv.first + "'");
      else if (!is_param) kwargs->Set(kv.first, kv.second);
    }
    for (size_t k = 0; k < params.size(); ++k) {
      const Param& p = params[k];
      const Value* given = k < a.positional.size() ? &a.positional[k] : nullptr;
      for (auto& kv : a.keyword) {
        if (!given && kv.first == p.name) given = &kv.second;
      }
      if (given) sc->Set(p.name, *given);
      else if (p.default_value) sc->Set(p.name, in.Eval(*p.default_value, *sc));
      else sc->Set(p.name, Value::Undefined("parameter '" + p.name + "' was not provided"));
    }
    sc->Set("varargs", Value::MakeList(std::move(varargs), /*tuple=*/true));
    sc->Set("kwargs", Value::MakeDict(std::move(kwargs)));
    ++in.call_depth_;
    struct Depth {
      int* d;
      ~Depth() { --*d; }
    } depth{&in.call_depth_};
    Output out;
    in.Exec(stmt->body, *sc, out);
    return Value::String(out.Take());
  });
}

Value Interpreter::Call(const Value& fn, CallArgs& args) {
  if (fn.kind() == Kind::kCallable) return fn.callable().fn(*this, args);
  if (fn.is_undefined()) {
    if (fn.str().find("is unsafe") != std::string::npos) Fail(ErrorKind::kSecurity, fn.str());
    FailUndefined(fn);
  }
  Fail(ErrorKind::kType, "'" + fn.TypeName() + "' object is not callable");
}

void Interpreter::EvalArgs(const Expr& e, size_t first, Scope& scope, CallArgs& args) {
  for (size_t k = first; k < e.args.size(); ++k) args.positional.push_back(Eval(*e.args[k], scope));
  for (const auto& kv : e.kwargs) args.keyword.emplace_back(kv.first, Eval(*kv.second, scope));
  if (e.dyn_args) {
    for (Value& v : PyIterate(Eval(*e.dyn_args, scope))) args.positional.push_back(std::move(v));
  }
  if (e.dyn_kwargs) {
    Value d = Eval(*e.dyn_kwargs, scope);
    if (!d.is_dict()) Fail(ErrorKind::kType, "argument after ** must be a mapping, not " + d.TypeName());
    for (const auto& kv : d.dict().items()) args.keyword.emplace_back(kv.first, kv.second);
  }
}

Value Interpreter::EvalCall(const Expr& e, Scope& scope) {
  const Expr& callee = *e.args[0];
  Value fn;
  if (callee.kind == ExprKind::kGetattr) {
    Value receiver = Eval(*callee.args[0], scope);
    if (HasMethod(receiver, callee.name)) {
      CallArgs args;
      EvalArgs(e, 1, scope, args);
      return CallMethod(*this, receiver, callee.name, args);
    }
    fn = GetAttr(receiver, callee.name);
  } else {
    fn = Eval(callee, scope);
  }
  CallArgs args;
  EvalArgs(e, 1, scope, args);
  return Call(fn, args);
}

Value Interpreter::GetAttr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) FailUndefined(obj);
  if (HasMethod(obj, name)) {
    if (!allow_mutation_ && IsMutatingMethod(obj, name)) {
      return Value::Undefined("access to attribute '" + name + "' of '" + obj.TypeName() + "' object is unsafe.");
    }
    return Value::MakeCallable(name, [obj, name](Interpreter& in, CallArgs& a) {
      return CallMethod(in, obj, name, a);
    });
  }
  if (obj.is_dict() || obj.kind() == Kind::kNamespace) {
    if (const Value* v = obj.dict().Find(name)) return *v;
  }
  return Value::Undefined("'" + obj.TypeName() + " object' has no attribute '" + name + "'");
}

Value Interpreter::GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) FailUndefined(obj);
  if ((obj.is_list() || obj.is_string()) && (key.kind() == Kind::kInt || key.kind() == Kind::kBool)) {
    return PyIndex(obj, key.as_int());
  }
  if (obj.is_dict() && key.is_string()) {
    if (const Value* v = obj.dict().Find(key.str())) return *v;
  }
  if (key.is_string()) return GetAttr(obj, key.str());
  std::string shown;
  key.AppendRepr(shown);
  return Value::Undefined("'" + obj.TypeName() + " object' has no attribute " + shown);
}

Value Interpreter::Eval(const Expr& e, Scope& scope) {
  // Expressions nest at most kMaxNesting deep per macro level, but macro
  // recursion multiplies that: bound the native stack depth overall.
  uintptr_t frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  bool stack_spent = stack_base_ > frame && stack_base_ - frame > limits_.max_stack_bytes;
  if (++eval_depth_ > limits_.max_eval_depth || stack_spent) {
    --eval_depth_;
    // Which limit trips first depends on the build's frame sizes: the stack
    // message names both ways a template gets there.
    Fail(ErrorKind::kLimit, stack_spent ? "maximum recursion depth exceeded: calls and expressions nested too deeply "
                                          "for the render's stack budget"
                                        : "expression evaluation nested too deeply");
  }
  struct Leave {
    int* d;
    ~Leave() { --*d; }
  } leave{&eval_depth_};
  try {
    return EvalInner(e, scope);
  } catch (RenderError& err) {
    if (err.pos().line == 0) err.set_pos(e.pos);
    throw;
  }
}

Value Interpreter::EvalInner(const Expr& e, Scope& scope) {
  switch (e.kind) {
    case ExprKind::kConst: return e.constant;
    case ExprKind::kName: {
      if (Value* v = scope.Find(e.name)) return *v;
      return Value::Undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      List items;
      items.reserve(e.args.size());
      for (const ExprPtr& a : e.args) items.push_back(Eval(*a, scope));
      return Value::MakeList(std::move(items), e.kind == ExprKind::kTuple);
    }
    case ExprKind::kDict: {
      auto d = std::make_shared<Dict>();
      for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
        Value key = Eval(*e.args[k], scope);
        if (!key.is_string()) Fail(ErrorKind::kType, "only string keys are supported in dict literals");
        d->Set(key.str(), Eval(*e.args[k + 1], scope));
      }
      return Value::MakeDict(std::move(d));
    }
    case ExprKind::kGetattr: return GetAttr(Eval(*e.args[0], scope), e.name);
    case ExprKind::kGetitem: {
      Value obj = Eval(*e.args[0], scope);
      const Expr& idx = *e.args[1];
      if (idx.kind != ExprKind::kSlice) return GetItem(obj, Eval(idx, scope));
      std::optional<int64_t> bounds[3];
      for (int k = 0; k < 3; ++k) {
        if (!idx.args[static_cast<size_t>(k)]) continue;
        Value b = Eval(*idx.args[static_cast<size_t>(k)], scope);
        if (b.kind() == Kind::kInt || b.kind() == Kind::kBool) bounds[k] = b.as_int();
        else if (!b.is_none()) Fail(ErrorKind::kType, "slice indices must be integers or None");
      }
      if (obj.is_undefined()) FailUndefined(obj);
      if (!obj.is_list() && !obj.is_string()) return Value::Undefined("'" + obj.TypeName() + " object' is not sliceable");
      return PySlice(obj, bounds[0], bounds[1], bounds[2]);
    }
    case ExprKind::kSlice: Fail(ErrorKind::kType, "slice outside of a subscript");
    case ExprKind::kCall: return EvalCall(e, scope);
    case ExprKind::kFilter: {
      Value input = e.args[0] ? Eval(*e.args[0], scope) : filter_inputs_.back();
      CallArgs args;
      EvalArgs(e, 1, scope, args);
      return ApplyFilter(*this, e.name, input, args);
    }
    case ExprKind::kTest: {
      Value input = Eval(*e.args[0], scope);
      CallArgs args;
      EvalArgs(e, 1, scope, args);
      return Value::Bool(ApplyTest(*this, e.name, input, args) != e.negated);
    }
    case ExprKind::kUnary: {
      Value v = Eval(*e.args[0], scope);
      if (e.name == "not") return Value::Bool(!v.Truthy());
      return Negate(v, e.name == "-");
    }
    case ExprKind::kBinary: {
      if (e.name == "and" || e.name == "or") {
        Value l = Eval(*e.args[0], scope);
        if (l.Truthy() == (e.name == "or")) return l;
        return Eval(*e.args[1], scope);
      }
      Value l = Eval(*e.args[0], scope);
      Value r = Eval(*e.args[1], scope);
      return BinaryOp(e.name, l, r);
    }
    case ExprKind::kCompare: {
      Value left = Eval(*e.args[0], scope);
      for (size_t k = 0; k < e.ops.size(); ++k) {
        Value right = Eval(*e.args[k + 1], scope);
        const std::string& op = e.ops[k];
        bool ok;
        if (op == "==") ok = PyEquals(left, right);
        else if (op == "!=") ok = !PyEquals(left, right);
        else if (op == "in") ok = PyContains(right, left);
        else if (op == "notin") ok = !PyContains(right, left);
        else {
          int c = PyCompare(left, right);
          ok = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
        }
        if (!ok) return Value::Bool(false);
        left = std::move(right);
      }
      return Value::Bool(true);
    }
    case ExprKind::kCondExpr: {
      if (Eval(*e.args[0], scope).Truthy()) return Eval(*e.args[1], scope);
      if (e.args[2]) return Eval(*e.args[2], scope);
      return Value::Undefined("the inline if-expression evaluated to false and no else section was defined.");
    }
  }
  Fail(ErrorKind::kType, "unknown expression");
}

}  // namespace lineage::jinja
