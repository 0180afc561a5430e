// ExprParser: Jinja expressions, following jinja2's grammar and precedence
// (condexpr < or < and < not < compare < + - < ~ < * / // % < ** < unary <
// filters and tests < postfix). Unknown filters and tests are syntax errors
// at the name's position, as jinja2 reports them when compiling. Internal to
// the parser.
#pragma once

#include <initializer_list>
#include <string>

#include "text/jinja/token_cursor.h"

namespace lineage::jinja {

class ExprParser : public TokenCursor {
 public:
  using TokenCursor::TokenCursor;

  bool IsTupleEnd(std::initializer_list<const char*> extra) const;
  ExprPtr ParseTuple(bool explicit_parens, bool with_condexpr, std::initializer_list<const char*> extra = {});
  ExprPtr ParseExpression(bool with_condexpr);
  ExprPtr ParseCondExpr();
  ExprPtr Binary(const std::string& op, Pos pos, ExprPtr l, ExprPtr r);
  // One left-associative level: operand (op operand)*.
  template <typename IsOpFn, typename OperandFn>
  ExprPtr ParseLeftAssoc(IsOpFn is_op, OperandFn operand);
  ExprPtr ParseOr();
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseCompare();
  ExprPtr ParseMath1();
  ExprPtr ParseConcat();
  ExprPtr ParseMath2();
  ExprPtr ParsePow();
  ExprPtr ParseUnary(bool with_filter);
  ExprPtr ParsePrimary();
  ExprPtr ParsePostfix(ExprPtr node);
  ExprPtr ParseFilterExpr(ExprPtr node);
  ExprPtr ParseSubscript(ExprPtr node);
  ExprPtr ParseSubscribed();
  void ParseCallArgs(Expr* e);
  ExprPtr ParseCall(ExprPtr node);
  std::string ParseDottedName();
  ExprPtr ParseFilter(ExprPtr node, bool start_inline);
  ExprPtr ParseTest(ExprPtr node);
};

}  // namespace lineage::jinja
