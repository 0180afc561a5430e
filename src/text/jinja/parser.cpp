#include "text/jinja/parser.h"

#include <initializer_list>

#include "text/jinja/expr_parser.h"

namespace lineage::jinja {
namespace {

// The statement parser: template data, {{ }} and {% %} tags, nested blocks.
class Parser : public ExprParser {
 public:
  using ExprParser::ExprParser;

  Body ParseTemplate() {
    Body body = Subparse({});
    if (Cur().type != Tok::kEof) Error(Cur().pos, "unexpected '" + Cur().text + "'");
    return body;
  }

 private:
  // A statement of `kind` at the current keyword, which is consumed.
  StmtPtr Open(StmtKind kind) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->pos = Cur().pos;
    Next();
    return s;
  }


  // Parses until a block tag whose keyword is in `end` (cursor left on it).
  Body Subparse(std::initializer_list<const char*> end) {
    DepthGuard guard(this);
    Body body;
    while (Cur().type != Tok::kEof) {
      const Token& t = Cur();
      if (t.type == Tok::kData) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::kOutput;
        s->pos = t.pos;
        s->text = t.text;
        body.push_back(std::move(s));
        Next();
      } else if (t.type == Tok::kVarBegin) {
        Next();
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::kPrint;
        s->pos = Cur().pos;
        s->expr = ParseTuple(false, true);
        if (Cur().type != Tok::kVarEnd) Error(Cur().pos, "expected end of print statement, got '" + Describe(Cur()) + "'");
        Next();
        body.push_back(std::move(s));
      } else if (t.type == Tok::kBlockBegin) {
        Next();
        for (const char* e : end) {
          if (IsName(e)) return body;
        }
        body.push_back(ParseStatement());
        ExpectBlockEnd();
      } else {
        Error(t.pos, "unexpected '" + Describe(t) + "'");
      }
    }
    return body;
  }

  Body ParseStatements(std::initializer_list<const char*> end, bool drop_needle, const Token& opener) {
    ExpectBlockEnd();
    Body body = Subparse(end);
    if (Cur().type == Tok::kEof) {
      std::string expected;
      for (const char* e : end) expected += (expected.empty() ? "'" : " or '") + std::string(e) + "'";
      Error(opener.pos, "unexpected end of template: block '" + opener.text + "' opened here was never closed (expected " + expected + ")");
    }
    if (drop_needle) Next();
    return body;
  }

  StmtPtr ParseStatement() {
    const Token& t = Cur();
    if (t.type != Tok::kName) Error(t.pos, "tag name expected");
    const std::string& kw = t.text;
    if (kw == "for") return ParseFor();
    if (kw == "if") return ParseIf();
    if (kw == "set") return ParseSet();
    if (kw == "macro") return ParseMacro();
    if (kw == "call") return ParseCallBlock();
    if (kw == "filter") return ParseFilterBlock();
    if (kw == "with") return ParseWith();
    if (kw == "generation") {
      // transformers' AssistantTracker tag: renders its body unchanged (it
      // only records where assistant text is, for training masks).
      const Token& opener = Cur();
      StmtPtr s = Open(StmtKind::kScope);
      s->body = ParseStatements({"endgeneration"}, true, opener);
      return s;
    }
    if (kw == "break" || kw == "continue") {
      if (loop_depth_ == 0) Error(t.pos, "'" + kw + "' outside of a loop");
      auto s = std::make_unique<Stmt>();
      s->kind = kw == "break" ? StmtKind::kBreak : StmtKind::kContinue;
      s->pos = t.pos;
      Next();
      return s;
    }
    Error(t.pos, "encountered unknown tag '" + kw + "'");
  }

  StmtPtr ParseFor() {
    const Token& opener = Cur();
    StmtPtr s = Open(StmtKind::kFor);
    s->target = ParseAssignTarget(false, true);
    ExpectName("in");
    s->expr = ParseTuple(false, false, {"recursive"});
    if (SkipName("if")) s->filter = ParseExpression(true);
    if (IsName("recursive")) Error(Cur().pos, "recursive loops are not supported");
    ++loop_depth_;
    s->body = ParseStatements({"endfor", "else"}, false, opener);
    --loop_depth_;
    bool is_else = IsName("else");
    Next();
    if (is_else) s->else_body = ParseStatements({"endfor"}, true, opener);
    return s;
  }

  StmtPtr ParseIf() {
    const Token& opener = Cur();
    Next();
    auto root = std::make_unique<Stmt>();
    Stmt* node = root.get();
    node->kind = StmtKind::kIf;
    node->pos = opener.pos;
    ChainGuard chain(this);  // each elif nests in the else of the one before
    for (;; chain.Link()) {
      node->expr = ParseTuple(false, false);
      node->body = ParseStatements({"elif", "else", "endif"}, false, opener);
      const Token& tok = Cur();
      Next();
      if (tok.text == "elif") {
        auto elif = std::make_unique<Stmt>();
        elif->kind = StmtKind::kIf;
        elif->pos = tok.pos;
        Stmt* next = elif.get();
        node->else_body.push_back(std::move(elif));
        node = next;
        continue;
      }
      if (tok.text == "else") node->else_body = ParseStatements({"endif"}, true, opener);
      break;
    }
    return root;
  }

  StmtPtr ParseSet() {
    const Token& opener = Cur();
    auto s = std::make_unique<Stmt>();
    s->pos = opener.pos;
    Next();
    s->target = ParseAssignTarget(true, true);
    if (SkipOp("=")) {
      s->kind = StmtKind::kSet;
      s->expr = ParseTuple(false, true);
      return s;
    }
    s->kind = StmtKind::kSetBlock;
    if (IsOp("|")) s->expr = ParseFilter(nullptr, false);
    s->body = ParseStatements({"endset"}, true, opener);
    return s;
  }

  std::vector<Param> ParseSignature() {
    std::vector<Param> params;
    ExpectOp("(");
    while (!IsOp(")")) {
      if (!params.empty()) ExpectOp(",");
      if (IsOp(")")) break;
      Param p;
      p.name = ExpectName();
      if (SkipOp("=")) p.default_value = ParseExpression(true);
      else if (!params.empty() && params.back().default_value) Error(Cur().pos, "non-default argument follows default argument");
      params.push_back(std::move(p));
    }
    ExpectOp(")");
    return params;
  }

  // A macro's or caller's body: break and continue cannot reach a loop outside it.
  void ParseCallableBody(Stmt* s, const char* end, const Token& opener) {
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = ParseStatements({end}, true, opener);
    loop_depth_ = saved;
    s->uses_caller = BodyReadsName(s->body, "caller");
    s->uses_varargs = BodyReadsName(s->body, "varargs");
    s->uses_kwargs = BodyReadsName(s->body, "kwargs");
  }

  StmtPtr ParseMacro() {
    const Token& opener = Cur();
    StmtPtr s = Open(StmtKind::kMacro);
    s->name = ExpectName();
    s->params = ParseSignature();
    ParseCallableBody(s.get(), "endmacro", opener);
    return s;
  }

  StmtPtr ParseCallBlock() {
    const Token& opener = Cur();
    StmtPtr s = Open(StmtKind::kCallBlock);
    if (IsOp("(")) s->params = ParseSignature();
    s->expr = ParseExpression(true);
    if (s->expr->kind != ExprKind::kCall) Error(s->expr->pos, "expected call");
    ParseCallableBody(s.get(), "endcall", opener);
    return s;
  }

  StmtPtr ParseWith() {
    const Token& opener = Cur();
    StmtPtr s = Open(StmtKind::kScope);
    while (Cur().type != Tok::kBlockEnd) {
      if (!s->params.empty()) ExpectOp(",");
      Param p;
      p.name = ExpectName();
      ExpectOp("=");
      p.default_value = ParseExpression(true);
      s->params.push_back(std::move(p));
    }
    s->body = ParseStatements({"endwith"}, true, opener);
    return s;
  }

  StmtPtr ParseFilterBlock() {
    const Token& opener = Cur();
    StmtPtr s = Open(StmtKind::kFilterBlock);
    s->expr = ParseFilter(nullptr, true);
    s->body = ParseStatements({"endfilter"}, true, opener);
    return s;
  }

  Target ParseAssignTarget(bool with_namespace, bool with_tuple) {
    Target t;
    if (with_namespace && Cur().type == Tok::kName && Look().type == Tok::kOp && Look().text == ".") {
      t.names.push_back(ExpectName());
      Next();
      t.attr = ExpectName();
      return t;
    }
    bool parens = with_tuple && SkipOp("(");
    while (true) {
      t.names.push_back(ExpectName());
      if (!with_tuple || !SkipOp(",")) break;
      t.is_tuple = true;
      if (Cur().type != Tok::kName) break;
    }
    if (parens) {
      t.is_tuple = true;
      ExpectOp(")");
    }
    return t;
  }

  int loop_depth_ = 0;
};

bool ExprReadsName(const Expr* e, const std::string& name) {
  if (!e) return false;
  if (e->kind == ExprKind::kName && e->name == name) return true;
  for (const ExprPtr& a : e->args) {
    if (ExprReadsName(a.get(), name)) return true;
  }
  for (const auto& kv : e->kwargs) {
    if (ExprReadsName(kv.second.get(), name)) return true;
  }
  return ExprReadsName(e->dyn_args.get(), name) || ExprReadsName(e->dyn_kwargs.get(), name);
}

}  // namespace

bool BodyReadsName(const Body& body, const std::string& name) {
  for (const StmtPtr& s : body) {
    if (ExprReadsName(s->expr.get(), name) || ExprReadsName(s->filter.get(), name)) return true;
    for (const Param& p : s->params) {
      if (ExprReadsName(p.default_value.get(), name)) return true;
    }
    if (BodyReadsName(s->body, name) || BodyReadsName(s->else_body, name)) return true;
  }
  return false;
}

Body ParseTokens(const std::vector<Token>& tokens) { return Parser(tokens).ParseTemplate(); }

}  // namespace lineage::jinja
