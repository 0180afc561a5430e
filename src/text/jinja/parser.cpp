#include "text/jinja/parser.h"

#include <algorithm>
#include <initializer_list>

#include "text/jinja/builtins.h"

namespace lineage::jinja {
namespace {

constexpr int kMaxNesting = 200;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& toks) : toks_(toks) {}

  Body ParseTemplate() {
    Body body = Subparse({});
    if (Cur().type != Tok::kEof) Error(Cur().pos, "unexpected '" + Cur().text + "'");
    return body;
  }

 private:
  const Token& Cur() const { return toks_[i_]; }
  const Token& Look(size_t k = 1) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  void Next() { if (i_ + 1 < toks_.size()) ++i_; }
  bool IsOp(const char* op) const { return Cur().type == Tok::kOp && Cur().text == op; }
  bool IsName(const char* name) const { return Cur().type == Tok::kName && Cur().text == name; }
  bool SkipOp(const char* op) { if (IsOp(op)) { Next(); return true; } return false; }
  bool SkipName(const char* name) { if (IsName(name)) { Next(); return true; } return false; }

  [[noreturn]] void Error(Pos pos, const std::string& message) const {
    throw RenderError(ErrorKind::kSyntax, pos, message);
  }
  static std::string Describe(const Token& t) {
    switch (t.type) {
      case Tok::kEof: return "end of template";
      case Tok::kBlockEnd: return "end of statement block";
      case Tok::kVarEnd: return "end of print statement";
      case Tok::kBlockBegin: return "begin of statement block";
      case Tok::kVarBegin: return "begin of print statement";
      case Tok::kString: return "string";
      case Tok::kInt: return "integer";
      case Tok::kFloat: return "float";
      default: return t.text;
    }
  }
  void ExpectOp(const char* op) {
    if (!SkipOp(op)) Error(Cur().pos, std::string("expected '") + op + "', got '" + Describe(Cur()) + "'");
  }
  std::string ExpectName() {
    if (Cur().type != Tok::kName) Error(Cur().pos, "expected name, got '" + Describe(Cur()) + "'");
    std::string n = Cur().text;
    Next();
    return n;
  }
  void ExpectName(const char* name) {
    if (!SkipName(name)) Error(Cur().pos, std::string("expected '") + name + "', got '" + Describe(Cur()) + "'");
  }
  void ExpectBlockEnd() {
    if (Cur().type != Tok::kBlockEnd) Error(Cur().pos, "expected end of statement block, got '" + Describe(Cur()) + "'");
    Next();
  }

  static ExprPtr Make(ExprKind kind, Pos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  // ---- statements ---------------------------------------------------------

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
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kFor;
    s->pos = opener.pos;
    Next();
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
    while (true) {
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

  StmtPtr ParseMacro() {
    const Token& opener = Cur();
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kMacro;
    s->pos = opener.pos;
    Next();
    s->name = ExpectName();
    s->params = ParseSignature();
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = ParseStatements({"endmacro"}, true, opener);
    loop_depth_ = saved;
    return s;
  }

  StmtPtr ParseCallBlock() {
    const Token& opener = Cur();
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kCallBlock;
    s->pos = opener.pos;
    Next();
    if (IsOp("(")) s->params = ParseSignature();
    s->expr = ParseExpression(true);
    if (s->expr->kind != ExprKind::kCall) Error(s->expr->pos, "expected call");
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = ParseStatements({"endcall"}, true, opener);
    loop_depth_ = saved;
    return s;
  }

  StmtPtr ParseFilterBlock() {
    const Token& opener = Cur();
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kFilterBlock;
    s->pos = opener.pos;
    Next();
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

  // ---- expressions --------------------------------------------------------

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > kMaxNesting) p_->Error(p_->Cur().pos, "expression nested too deeply");
    }
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };

  bool IsTupleEnd(std::initializer_list<const char*> extra) const {
    if (Cur().type == Tok::kVarEnd || Cur().type == Tok::kBlockEnd || Cur().type == Tok::kEof || IsOp(")")) return true;
    for (const char* e : extra) {
      if (IsName(e)) return true;
    }
    return false;
  }

  ExprPtr ParseTuple(bool explicit_parens, bool with_condexpr, std::initializer_list<const char*> extra = {}) {
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

  ExprPtr ParseExpression(bool with_condexpr) {
    DepthGuard guard(this);
    return with_condexpr ? ParseCondExpr() : ParseOr();
  }

  ExprPtr ParseCondExpr() {
    ExprPtr expr1 = ParseOr();
    while (IsName("if")) {
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

  ExprPtr Binary(const std::string& op, Pos pos, ExprPtr l, ExprPtr r) {
    auto e = Make(ExprKind::kBinary, pos);
    e->name = op;
    e->args.push_back(std::move(l));
    e->args.push_back(std::move(r));
    return e;
  }

  ExprPtr ParseOr() {
    ExprPtr left = ParseAnd();
    while (IsName("or")) {
      Pos pos = Cur().pos;
      Next();
      left = Binary("or", pos, std::move(left), ParseAnd());
    }
    return left;
  }

  ExprPtr ParseAnd() {
    ExprPtr left = ParseNot();
    while (IsName("and")) {
      Pos pos = Cur().pos;
      Next();
      left = Binary("and", pos, std::move(left), ParseNot());
    }
    return left;
  }

  ExprPtr ParseNot() {
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

  ExprPtr ParseCompare() {
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

  ExprPtr ParseMath1() {
    ExprPtr left = ParseConcat();
    while (IsOp("+") || IsOp("-")) {
      std::string op = Cur().text;
      Pos pos = Cur().pos;
      Next();
      left = Binary(op, pos, std::move(left), ParseConcat());
    }
    return left;
  }

  ExprPtr ParseConcat() {
    ExprPtr left = ParseMath2();
    while (IsOp("~")) {
      Pos pos = Cur().pos;
      Next();
      left = Binary("~", pos, std::move(left), ParseMath2());
    }
    return left;
  }

  ExprPtr ParseMath2() {
    ExprPtr left = ParsePow();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      std::string op = Cur().text;
      Pos pos = Cur().pos;
      Next();
      left = Binary(op, pos, std::move(left), ParsePow());
    }
    return left;
  }

  ExprPtr ParsePow() {
    ExprPtr left = ParseUnary(true);
    while (IsOp("**")) {
      Pos pos = Cur().pos;
      Next();
      left = Binary("**", pos, std::move(left), ParseUnary(true));
    }
    return left;
  }

  ExprPtr ParseUnary(bool with_filter) {
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

  ExprPtr ParsePrimary() {
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

  ExprPtr ParsePostfix(ExprPtr node) {
    while (true) {
      if (IsOp(".") || IsOp("[")) node = ParseSubscript(std::move(node));
      else if (IsOp("(")) node = ParseCall(std::move(node));
      else break;
    }
    return node;
  }

  ExprPtr ParseFilterExpr(ExprPtr node) {
    while (true) {
      if (IsOp("|")) node = ParseFilter(std::move(node), false);
      else if (IsName("is")) node = ParseTest(std::move(node));
      else if (IsOp("(")) node = ParseCall(std::move(node));
      else break;
    }
    return node;
  }

  ExprPtr ParseSubscript(ExprPtr node) {
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

  ExprPtr ParseSubscribed() {
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

  void ParseCallArgs(Expr* e) {
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

  ExprPtr ParseCall(ExprPtr node) {
    auto e = Make(ExprKind::kCall, node->pos);
    e->args.push_back(std::move(node));
    ParseCallArgs(e.get());
    return e;
  }

  std::string ParseDottedName() {
    std::string name = ExpectName();
    while (IsOp(".")) {
      Next();
      name += "." + ExpectName();
    }
    return name;
  }

  ExprPtr ParseFilter(ExprPtr node, bool start_inline) {
    while (IsOp("|") || start_inline) {
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

  ExprPtr ParseTest(ExprPtr node) {
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

  const std::vector<Token>& toks_;
  size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body ParseTokens(const std::vector<Token>& tokens) { return Parser(tokens).ParseTemplate(); }

}  // namespace lineage::jinja
