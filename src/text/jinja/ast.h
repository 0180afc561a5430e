// Syntax tree of a parsed template. Built once by the parser, then only read
// (a Template may be rendered from several threads at once).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/error.h"
#include "text/jinja/value.h"

namespace lineage::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind {
  kConst,       // constant
  kName,        // name
  kList,        // args
  kTuple,       // args
  kDict,        // args: key0, value0, key1, value1, ...
  kGetattr,     // args[0] . name
  kGetitem,     // args[0] [ args[1] ]
  kSlice,       // args: start, stop, step (each may be null)
  kCall,        // args[0] ( args[1..], kwargs ); dyn_args, dyn_kwargs
  kFilter,      // args[0] | name ( args[1..], kwargs ); args[0] null = filter block input
  kTest,        // args[0] is [not] name ( args[1..], kwargs ); negated
  kUnary,       // name: "not", "-", "+"
  kBinary,      // name: "+", "-", "*", "/", "//", "%", "**", "~", "and", "or"
  kCompare,     // args[0] then ops[k] args[k+1]
  kCondExpr,    // args: cond, then, else (else may be null)
};

struct Expr {
  ExprKind kind;
  Pos pos;
  Value constant;
  std::string name;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;  // kCompare: "==", "!=", "<", "<=", ">", ">=", "in", "notin"
  ExprPtr dyn_args, dyn_kwargs;
};

// An assignment target: a name, a tuple of names, or namespace.attr.
struct Target {
  std::vector<std::string> names;  // one name, or a tuple
  bool is_tuple = false;
  std::string attr;  // non-empty: names[0].attr (namespace assignment)
};

enum class StmtKind {
  kOutput,     // text
  kPrint,      // {{ expr }}
  kIf,         // expr, body, else_body
  kFor,        // target, expr (iterable), filter (optional), body, else_body
  kSet,        // target = expr
  kSetBlock,   // target, body, expr = optional filter chain applied to the body
  kMacro,      // name, params, body
  kCallBlock,  // expr = call, params (caller's), body
  kFilterBlock,// expr = filter chain, body
  kScope,      // {% with a = x %} / {% generation %}: params = assignments, body in a child scope
  kBreak,
  kContinue,
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  StmtKind kind;
  Pos pos;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;  // kFor: the loop filter
  Target target;
  std::string name;
  std::vector<Param> params;
  // kMacro / kCallBlock: whether the body names caller, varargs, kwargs
  // (jinja2 only accepts extra arguments, or a caller, when it does).
  bool uses_caller = false;
  bool uses_varargs = false;
  bool uses_kwargs = false;
  Body body, else_body;
};

// Whether `name` is read anywhere in body (expressions of nested statements
// included).
bool BodyReadsName(const Body& body, const std::string& name);

}  // namespace lineage::jinja
