// TokenCursor: the parser's position in the token stream, with the lookahead,
// expectation and error helpers both the statement and the expression
// parsers use. Internal to the parser; not thread-safe (one per parse).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace lineage::jinja {

// Statements and expressions nest at most this deep (stack safety).
constexpr int kMaxNesting = 200;

class TokenCursor {
 public:
  explicit TokenCursor(const std::vector<Token>& toks) : toks_(toks) {}

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


  struct DepthGuard {
    explicit DepthGuard(TokenCursor* p) : p_(p) {
      if (++p_->depth_ > kMaxNesting) p_->Error(p_->Cur().pos, "expression nested too deeply");
    }
    ~DepthGuard() { --p_->depth_; }
    TokenCursor* p_;
  };

  // Counts the links of a chain the parser builds in a loop (a | f | g,
  // a.b[c](d), a + b + c, x if c else y if d) as nesting: each link wraps the
  // tree built so far one level deeper, and evaluating or destroying the
  // tree recurses once per level.
  struct ChainGuard {
    explicit ChainGuard(TokenCursor* p) : p_(p) {}
    void Link() {
      ++links_;
      if (++p_->depth_ > kMaxNesting) p_->Error(p_->Cur().pos, "expression nested too deeply");
    }
    ~ChainGuard() { p_->depth_ -= links_; }
    ChainGuard(const ChainGuard&) = delete;
    ChainGuard& operator=(const ChainGuard&) = delete;
    TokenCursor* p_;
    int links_ = 0;
  };

 protected:
  const std::vector<Token>& toks_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace lineage::jinja
