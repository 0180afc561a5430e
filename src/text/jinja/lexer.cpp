#include "text/jinja/lexer.h"

#include <algorithm>
#include <cstring>

#include "text/jinja/string_util.h"

namespace lineage::jinja {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> Run() {
    size_t pos = 0;
    bool line_starting = true;
    const size_t n = src_.size();
    while (pos < n) {
      size_t start = FindTagStart(pos);
      if (start == std::string::npos) {
        Emit(Tok::kData, src_.substr(pos), pos);
        break;
      }
      char kind = src_[start + 1];
      size_t after = start + 2;
      char sign = (after < n && (src_[after] == '-' || src_[after] == '+')) ? src_[after] : 0;
      std::string_view text(src_.data() + pos, start - pos);
      text = StripBeforeTag(text, sign, kind != '{', line_starting);
      if (!text.empty()) Emit(Tok::kData, std::string(text), pos);
      if (sign) ++after;
      if (kind == '#') {
        pos = SkipComment(start, after);
      } else if (kind == '%' && IsRawBegin(after)) {
        pos = LexRaw(start, after);
      } else {
        pos = LexTag(kind, start, after);
      }
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    Emit(Tok::kEof, "", n);
    return std::move(tokens_);
  }

 private:
  Pos PosAt(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    size_t line = static_cast<size_t>(it - line_starts_.begin());
    return Pos{static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
  }

  [[noreturn]] void Error(size_t offset, const std::string& message) const {
    throw RenderError(ErrorKind::kSyntax, PosAt(offset), message);
  }

  void Emit(Tok type, std::string text, size_t offset) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.pos = PosAt(offset);
    tokens_.push_back(std::move(t));
  }

  size_t FindTagStart(size_t from) const {
    while (true) {
      size_t p = src_.find('{', from);
      if (p == std::string::npos || p + 1 >= src_.size()) return std::string::npos;
      char c = src_[p + 1];
      if (c == '{' || c == '%' || c == '#') return p;
      from = p + 1;
    }
  }

  // "-" strips all whitespace before the tag; lstrip_blocks strips spaces
  // and tabs between the line start and a block or comment tag.
  static std::string_view StripBeforeTag(std::string_view text, char sign, bool is_block, bool line_starting) {
    if (sign == '-') return PyRstrip(text);
    if (sign == '+' || !is_block) return text;
    size_t l_pos = text.rfind('\n');
    l_pos = (l_pos == std::string_view::npos) ? 0 : l_pos + 1;
    if (l_pos == 0 && !line_starting) return text;
    std::string_view tail = text.substr(l_pos);
    if (!tail.empty() && std::all_of(tail.begin(), tail.end(), IsSpace)) return text.substr(0, l_pos);
    return text;
  }

  // After a closing tag: "-" eats following whitespace; a plain block or
  // comment end eats one newline (trim_blocks).
  size_t AfterTagEnd(size_t pos, char mode, bool trim_newline) const {
    if (mode == '-') {
      // Python's \s: Unicode whitespace too.
      while (pos < src_.size()) {
        int32_t cp;
        size_t n = DecodeAt(src_, pos, &cp);
        if (!IsPySpace(cp)) break;
        pos += n;
      }
    } else if (mode != '+' && trim_newline && pos < src_.size() && src_[pos] == '\n') {
      ++pos;
    }
    return pos;
  }

  size_t SkipComment(size_t start, size_t after) const {
    size_t e = src_.find("#}", after);
    if (e == std::string::npos) Error(start, "missing end of comment tag");
    char mode = 0;
    if (e > after && (src_[e - 1] == '-' || src_[e - 1] == '+')) mode = src_[e - 1];
    return AfterTagEnd(e + 2, mode, true);
  }

  bool IsRawBegin(size_t p) const {
    while (p < src_.size() && IsSpace(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && IsSpace(src_[p])) ++p;
    return src_.compare(p, 2, "%}") == 0 || src_.compare(p, 3, "-%}") == 0;
  }

  size_t LexRaw(size_t start, size_t p) {
    p = src_.find("raw", p) + 3;
    while (IsSpace(src_[p])) ++p;
    char open_mode = src_[p] == '-' ? '-' : 0;
    p = src_.find("%}", p) + 2;
    if (open_mode == '-') while (p < src_.size() && IsSpace(src_[p])) ++p;
    // Find {%[-+]?\s*endraw\s*[-+]?%}
    size_t search = p;
    while (true) {
      size_t t = src_.find("{%", search);
      if (t == std::string::npos) Error(start, "missing end of raw directive");
      size_t q = t + 2;
      char sign = (src_[q] == '-' || src_[q] == '+') ? src_[q] : 0;
      if (sign) ++q;
      while (q < src_.size() && IsSpace(src_[q])) ++q;
      if (src_.compare(q, 6, "endraw") != 0) { search = t + 2; continue; }
      q += 6;
      while (q < src_.size() && IsSpace(src_[q])) ++q;
      char mode = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) mode = src_[q++];
      if (src_.compare(q, 2, "%}") != 0) { search = t + 2; continue; }
      std::string_view body(src_.data() + p, t - p);
      body = StripBeforeTag(body, sign, true, false);
      if (!body.empty()) Emit(Tok::kData, std::string(body), p);
      return AfterTagEnd(q + 2, mode, true);
    }
  }

  size_t LexTag(char kind, size_t start, size_t p) {
    const bool is_block = kind == '%';
    Emit(is_block ? Tok::kBlockBegin : Tok::kVarBegin, "", start);
    std::vector<char> brackets;
    const size_t n = src_.size();
    while (true) {
      while (p < n && IsSpace(src_[p])) ++p;
      if (p >= n) Error(start, is_block ? "unexpected end of template, expected '%}'" : "unexpected end of template, expected '}}'");
      if (brackets.empty()) {
        if (is_block) {
          char mode = 0;
          size_t q = p;
          if (src_[q] == '-' || src_[q] == '+') mode = src_[q++];
          if (src_.compare(q, 2, "%}") == 0) {
            Emit(Tok::kBlockEnd, "", p);
            return AfterTagEnd(q + 2, mode, true);
          }
        } else {
          if (src_.compare(p, 3, "-}}") == 0) {
            Emit(Tok::kVarEnd, "", p);
            return AfterTagEnd(p + 3, '-', false);
          }
          if (src_.compare(p, 2, "}}") == 0) {
            Emit(Tok::kVarEnd, "", p);
            return p + 2;
          }
        }
      }
      char c = src_[p];
      if (IsNameStart(c)) {
        size_t q = p;
        while (q < n && IsNameChar(src_[q])) ++q;
        Emit(Tok::kName, src_.substr(p, q - p), p);
        p = q;
      } else if (c == '\'' || c == '"') {
        p = LexString(p);
      } else if (IsDigit(c)) {
        p = LexNumber(p);
      } else {
        p = LexOperator(p, brackets);
      }
    }
  }

  size_t LexString(size_t p) {
    char quote = src_[p];
    size_t q = p + 1;
    while (q < src_.size() && src_[q] != quote) {
      if (src_[q] == '\\') ++q;
      ++q;
    }
    if (q >= src_.size()) Error(p, "unexpected end of string");
    Token t;
    t.type = Tok::kString;
    t.text = DecodePythonEscapes(std::string_view(src_.data() + p + 1, q - p - 1));
    t.pos = PosAt(p);
    tokens_.push_back(std::move(t));
    return q + 1;
  }

  size_t LexNumber(size_t p) {
    const size_t n = src_.size();
    auto digits = [&](size_t q) {
      while (q < n && (IsDigit(src_[q]) || (src_[q] == '_' && q + 1 < n && IsDigit(src_[q + 1])))) ++q;
      return q;
    };
    if (src_[p] == '0' && p + 1 < n && std::strchr("xXoObB", src_[p + 1]) && src_[p + 1] != 0) {
      int base = (src_[p + 1] == 'x' || src_[p + 1] == 'X') ? 16 : (src_[p + 1] == 'o' || src_[p + 1] == 'O') ? 8 : 2;
      size_t q = p + 2;
      std::string clean;
      while (q < n && (std::isxdigit(static_cast<unsigned char>(src_[q])) || src_[q] == '_')) {
        if (src_[q] != '_') clean += src_[q];
        ++q;
      }
      Token t;
      t.type = Tok::kInt;
      t.int_value = static_cast<int64_t>(std::strtoull(clean.c_str(), nullptr, base));
      t.pos = PosAt(p);
      tokens_.push_back(std::move(t));
      return q;
    }
    size_t q = digits(p);
    bool is_float = false;
    bool after_dot = p > 0 && src_[p - 1] == '.';
    if (!after_dot) {
      size_t r = q;
      if (r + 1 < n && src_[r] == '.' && IsDigit(src_[r + 1])) {
        r = digits(r + 1);
        is_float = true;
      }
      if (r < n && (src_[r] == 'e' || src_[r] == 'E')) {
        size_t s = r + 1;
        if (s < n && (src_[s] == '+' || src_[s] == '-')) ++s;
        if (s < n && IsDigit(src_[s])) {
          r = digits(s);
          is_float = true;
        }
      }
      if (is_float) q = r;
    }
    std::string clean;
    for (size_t k = p; k < q; ++k) {
      if (src_[k] != '_') clean += src_[k];
    }
    Token t;
    t.pos = PosAt(p);
    if (is_float) {
      t.type = Tok::kFloat;
      t.float_value = std::strtod(clean.c_str(), nullptr);
    } else {
      t.type = Tok::kInt;
      errno = 0;
      t.int_value = std::strtoll(clean.c_str(), nullptr, 10);
      if (errno == ERANGE) Error(p, "integer literal too large");
    }
    tokens_.push_back(std::move(t));
    return q;
  }

  size_t LexOperator(size_t p, std::vector<char>& brackets) {
    static const char* kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(p, 2, op) == 0) {
        Emit(Tok::kOp, op, p);
        return p + 2;
      }
    }
    char c = src_[p];
    if (!std::strchr("+-/*%~[](){}><=.:|,;", c) || c == 0) {
      Error(p, std::string("unexpected char '") + c + "'");
    }
    if (c == '(' || c == '[' || c == '{') brackets.push_back(c);
    if (c == ')' || c == ']' || c == '}') {
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (brackets.empty() || brackets.back() != open) Error(p, std::string("unexpected '") + c + "'");
      brackets.pop_back();
    }
    Emit(Tok::kOp, std::string(1, c), p);
    return p + 1;
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

std::string NormalizeNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

}  // namespace

std::vector<Token> Tokenize(std::string_view source) {
  return Lexer(NormalizeNewlines(source)).Run();
}

}  // namespace lineage::jinja
