#include "text/jinja/expr_parser.h"

#include "text/jinja/builtins.h"

namespace lineage::jinja {

bool ExprParser::IsTupleEnd(std::initializer_list<const char*> extra) const {
  if (Cur().type == Tok::kVarEnd || Cur().type == Tok::kBlockEnd || Cur().type == Tok::kEof || IsOp(")")) return true;
  for (const char* e : extra) {
    if (IsName(e)) return true;
  }
  return false;
}

ExprPtr ExprParser::ParseTuple(bool explicit_parens, bool with_condexpr, std::initializer_list<const char*> extra) {
  Pos pos = Cur().pos;
  std::vector<ExprPtr> args;
  bool is_tuple = false;
  while (true) {
    if (!args.empty()) ExpectOp(",");
    if (IsTupleEnd(extra)) break;
    args.push_back(ParseExpression(with_condexpr));
    if (IsOp(",")) is_tuple = true;
    else break;
  }
  if (!is_tuple) {
    if (!args.empty()) return std::move(args[0]);
    if (!explicit_parens) Error(Cur().pos, "expected an expression, got '" + Describe(Cur()) + "'");
  }
  auto e = Make(ExprKind::kTuple, pos);
  e->args = std::move(args);
  return e;
}

ExprPtr ExprParser::ParseExpression(bool with_condexpr) {
  DepthGuard guard(this);
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

ExprPtr ExprParser::ParseCondExpr() {
  ExprPtr expr1 = ParseOr();
  ChainGuard chain(this);
  while (IsName("if")) {
    chain.Link();
    Pos pos = Cur().pos;
    Next();
    auto e = Make(ExprKind::kCondExpr, pos);
    e->args.push_back(ParseOr());
    e->args.push_back(std::move(expr1));
    e->args.push_back(SkipName("else") ? ParseCondExpr() : nullptr);
    expr1 = std::move(e);
  }
  return expr1;
}

ExprPtr ExprParser::Binary(const std::string& op, Pos pos, ExprPtr l, ExprPtr r) {
  auto e = Make(ExprKind::kBinary, pos);
  e->name = op;
  e->args.push_back(std::move(l));
  e->args.push_back(std::move(r));
  return e;
}

template <typename IsOpFn, typename OperandFn>
ExprPtr ExprParser::ParseLeftAssoc(IsOpFn is_op, OperandFn operand) {
  ExprPtr left = operand();
  ChainGuard chain(this);
  while (is_op()) {
    chain.Link();
    std::string op = Cur().text;
    Pos pos = Cur().pos;
    Next();
    left = Binary(op, pos, std::move(left), operand());
  }
  return left;
}

ExprPtr ExprParser::ParseOr() {
  return ParseLeftAssoc([&] { return IsName("or"); }, [&] { return ParseAnd(); });
}

ExprPtr ExprParser::ParseAnd() {
  return ParseLeftAssoc([&] { return IsName("and"); }, [&] { return ParseNot(); });
}

ExprPtr ExprParser::ParseNot() {
  if (IsName("not")) {
    DepthGuard guard(this);
    auto e = Make(ExprKind::kUnary, Cur().pos);
    e->name = "not";
    Next();
    e->args.push_back(ParseNot());
    return e;
  }
  return ParseCompare();
}

ExprPtr ExprParser::ParseCompare() {
  Pos pos = Cur().pos;
  ExprPtr expr = ParseMath1();
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (Cur().type == Tok::kOp && (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" ||
                                   Cur().text == "<=" || Cur().text == ">" || Cur().text == ">=")) {
      op = Cur().text;
      Next();
    } else if (IsName("in")) {
      op = "in";
      Next();
    } else if (IsName("not") && Look().type == Tok::kName && Look().text == "in") {
      op = "notin";
      Next();
      Next();
    } else {
      break;
    }
    if (!cmp) {
      cmp = Make(ExprKind::kCompare, pos);
      cmp->args.push_back(std::move(expr));
    }
    cmp->ops.push_back(op);
    cmp->args.push_back(ParseMath1());
  }
  return cmp ? std::move(cmp) : std::move(expr);
}

ExprPtr ExprParser::ParseMath1() {
  return ParseLeftAssoc([&] { return IsOp("+") || IsOp("-"); }, [&] { return ParseConcat(); });
}

ExprPtr ExprParser::ParseConcat() {
  return ParseLeftAssoc([&] { return IsOp("~"); }, [&] { return ParseMath2(); });
}

ExprPtr ExprParser::ParseMath2() {
  return ParseLeftAssoc([&] { return IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%"); },
                        [&] { return ParsePow(); });
}

ExprPtr ExprParser::ParsePow() {
  return ParseLeftAssoc([&] { return IsOp("**"); }, [&] { return ParseUnary(true); });
}

ExprPtr ExprParser::ParseUnary(bool with_filter) {
  DepthGuard guard(this);
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    node = Make(ExprKind::kUnary, Cur().pos);
    node->name = Cur().text;
    Next();
    node->args.push_back(ParseUnary(false));
  } else {
    node = ParsePrimary();
  }
  node = ParsePostfix(std::move(node));
  if (with_filter) node = ParseFilterExpr(std::move(node));
  return node;
}

ExprPtr ExprParser::ParsePrimary() {
  const Token& t = Cur();
  Pos pos = t.pos;
  if (t.type == Tok::kName) {
    auto e = Make(ExprKind::kConst, pos);
    if (t.text == "true" || t.text == "True") e->constant = Value::Bool(true);
    else if (t.text == "false" || t.text == "False") e->constant = Value::Bool(false);
    else if (t.text == "none" || t.text == "None") e->constant = Value::None();
    else { e->kind = ExprKind::kName; e->name = t.text; }
    Next();
    return e;
  }
  if (t.type == Tok::kString) {
    std::string s;
    while (Cur().type == Tok::kString) {
      s += Cur().text;
      Next();
    }
    auto e = Make(ExprKind::kConst, pos);
    e->constant = Value::String(std::move(s));
    return e;
  }
  if (t.type == Tok::kInt || t.type == Tok::kFloat) {
    auto e = Make(ExprKind::kConst, pos);
    e->constant = t.type == Tok::kInt ? Value::Int(t.int_value) : Value::Float(t.float_value);
    Next();
    return e;
  }
  if (IsOp("(")) {
    Next();
    ExprPtr e = ParseTuple(true, true);
    ExpectOp(")");
    return e;
  }
  if (IsOp("[")) {
    Next();
    auto e = Make(ExprKind::kList, pos);
    while (!IsOp("]")) {
      if (!e->args.empty()) ExpectOp(",");
      if (IsOp("]")) break;
      e->args.push_back(ParseExpression(true));
    }
    ExpectOp("]");
    return e;
  }
  if (IsOp("{")) {
    Next();
    auto e = Make(ExprKind::kDict, pos);
    while (!IsOp("}")) {
      if (!e->args.empty()) ExpectOp(",");
      if (IsOp("}")) break;
      e->args.push_back(ParseExpression(true));
      ExpectOp(":");
      e->args.push_back(ParseExpression(true));
    }
    ExpectOp("}");
    return e;
  }
  Error(pos, "unexpected '" + Describe(t) + "'");
}

ExprPtr ExprParser::ParsePostfix(ExprPtr node) {
  ChainGuard chain(this);
  for (;; chain.Link()) {
    if (IsOp(".") || IsOp("[")) node = ParseSubscript(std::move(node));
    else if (IsOp("(")) node = ParseCall(std::move(node));
    else break;
  }
  return node;
}

ExprPtr ExprParser::ParseFilterExpr(ExprPtr node) {
  ChainGuard chain(this);
  for (;; chain.Link()) {
    if (IsOp("|")) node = ParseFilter(std::move(node), false);
    else if (IsName("is")) node = ParseTest(std::move(node));
    else if (IsOp("(")) node = ParseCall(std::move(node));
    else break;
  }
  return node;
}

ExprPtr ExprParser::ParseSubscript(ExprPtr node) {
  Pos pos = Cur().pos;
  if (SkipOp(".")) {
    const Token& attr = Cur();
    if (attr.type == Tok::kName) {
      auto e = Make(ExprKind::kGetattr, pos);
      e->name = attr.text;
      e->args.push_back(std::move(node));
      Next();
      return e;
    }
    if (attr.type != Tok::kInt) Error(attr.pos, "expected name or number");
    auto e = Make(ExprKind::kGetitem, pos);
    e->args.push_back(std::move(node));
    auto idx = Make(ExprKind::kConst, attr.pos);
    idx->constant = Value::Int(attr.int_value);
    e->args.push_back(std::move(idx));
    Next();
    return e;
  }
  ExpectOp("[");
  std::vector<ExprPtr> args;
  while (!IsOp("]")) {
    if (!args.empty()) ExpectOp(",");
    args.push_back(ParseSubscribed());
  }
  ExpectOp("]");
  auto e = Make(ExprKind::kGetitem, pos);
  e->args.push_back(std::move(node));
  if (args.size() == 1) {
    e->args.push_back(std::move(args[0]));
  } else {
    auto tuple = Make(ExprKind::kTuple, pos);
    tuple->args = std::move(args);
    e->args.push_back(std::move(tuple));
  }
  return e;
}

ExprPtr ExprParser::ParseSubscribed() {
  Pos pos = Cur().pos;
  auto slice = Make(ExprKind::kSlice, pos);
  if (IsOp(":")) {
    Next();
    slice->args.push_back(nullptr);
  } else {
    ExprPtr node = ParseExpression(true);
    if (!IsOp(":")) return node;
    Next();
    slice->args.push_back(std::move(node));
  }
  if (IsOp(":")) slice->args.push_back(nullptr);
  else if (!IsOp("]") && !IsOp(",")) slice->args.push_back(ParseExpression(true));
  else slice->args.push_back(nullptr);
  if (SkipOp(":")) {
    if (!IsOp("]") && !IsOp(",")) slice->args.push_back(ParseExpression(true));
    else slice->args.push_back(nullptr);
  } else {
    slice->args.push_back(nullptr);
  }
  return slice;
}

void ExprParser::ParseCallArgs(Expr* e) {
  ExpectOp("(");
  bool require_comma = false;
  while (!IsOp(")")) {
    if (require_comma) {
      ExpectOp(",");
      if (IsOp(")")) break;
    }
    if (IsOp("*")) {
      Next();
      if (e->dyn_args || e->dyn_kwargs) Error(Cur().pos, "invalid syntax for function call expression");
      e->dyn_args = ParseExpression(true);
    } else if (IsOp("**")) {
      Next();
      if (e->dyn_kwargs) Error(Cur().pos, "invalid syntax for function call expression");
      e->dyn_kwargs = ParseExpression(true);
    } else if (Cur().type == Tok::kName && Look().type == Tok::kOp && Look().text == "=") {
      if (e->dyn_kwargs) Error(Cur().pos, "invalid syntax for function call expression");
      std::string key = Cur().text;
      Next();
      Next();
      e->kwargs.emplace_back(std::move(key), ParseExpression(true));
    } else {
      if (e->dyn_args || e->dyn_kwargs || !e->kwargs.empty()) {
        Error(Cur().pos, "invalid syntax for function call expression");
      }
      e->args.push_back(ParseExpression(true));
    }
    require_comma = true;
  }
  ExpectOp(")");
}

ExprPtr ExprParser::ParseCall(ExprPtr node) {
  auto e = Make(ExprKind::kCall, node->pos);
  e->args.push_back(std::move(node));
  ParseCallArgs(e.get());
  return e;
}

std::string ExprParser::ParseDottedName() {
  std::string name = ExpectName();
  while (IsOp(".")) {
    Next();
    name += "." + ExpectName();
  }
  return name;
}

ExprPtr ExprParser::ParseFilter(ExprPtr node, bool start_inline) {
  ChainGuard chain(this);
  while (IsOp("|") || start_inline) {
    chain.Link();
    if (!start_inline) Next();
    start_inline = false;
    Pos pos = Cur().pos;
    auto e = Make(ExprKind::kFilter, pos);
    e->name = ParseDottedName();
    if (!HasFilter(e->name)) Error(pos, "no filter named '" + e->name + "'");
    e->args.push_back(std::move(node));
    if (IsOp("(")) ParseCallArgs(e.get());
    node = std::move(e);
  }
  return node;
}

ExprPtr ExprParser::ParseTest(ExprPtr node) {
  Pos pos = Cur().pos;
  Next();  // 'is'
  bool negated = SkipName("not");
  Pos name_pos = Cur().pos;
  auto e = Make(ExprKind::kTest, pos);
  e->name = ParseDottedName();
  if (!HasTest(e->name)) Error(name_pos, "no test named '" + e->name + "'");
  e->negated = negated;
  e->args.push_back(std::move(node));
  const Token& t = Cur();
  if (IsOp("(")) {
    ParseCallArgs(e.get());
  } else if ((t.type == Tok::kName || t.type == Tok::kString || t.type == Tok::kInt || t.type == Tok::kFloat ||
              IsOp("[") || IsOp("{")) &&
             !(IsName("else") || IsName("or") || IsName("and"))) {
    if (IsName("is")) Error(t.pos, "You cannot chain multiple tests with is");
    e->args.push_back(ParsePostfix(ParsePrimary()));
  }
  return e;
}

}  // namespace lineage::jinja
