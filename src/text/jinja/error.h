// Source positions and the error the interpreter raises internally.
//
// Inside src/text/jinja the lexer, parser and interpreter report failures by
// throwing RenderError, which carries the line and column of the construct
// at fault. Template::Parse and Template::Render catch it (and any other
// exception) and turn it into a Status: nothing is thrown across the module
// boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace lineage::jinja {

struct Pos {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based, in bytes of the line
};

enum class ErrorKind {
  kSyntax,     // the template does not parse
  kUndefined,  // an operation on an undefined value (jinja2.UndefinedError)
  kType,       // a Python TypeError / ValueError / ZeroDivisionError
  kRaised,     // the template called raise_exception()
  kSecurity,   // the sandbox refused (mutating a list or dict)
  kLimit,      // recursion, loop, size or memory limits
  kOutputLimit,  // the rendered text would exceed max_output_bytes
};

class RenderError : public std::runtime_error {
 public:
  RenderError(ErrorKind kind, Pos pos, const std::string& message)
      : std::runtime_error(message), kind_(kind), pos_(pos) {}
  ErrorKind kind() const { return kind_; }
  Pos pos() const { return pos_; }
  void set_pos(Pos pos) { pos_ = pos; }

 private:
  ErrorKind kind_;
  Pos pos_;
};

// Throws a RenderError whose position is filled in by the nearest enclosing
// expression (see Interpreter::Eval).
[[noreturn]] inline void Fail(ErrorKind kind, const std::string& message) {
  throw RenderError(kind, Pos{}, message);
}

}  // namespace lineage::jinja
