// Lexer: template source -> tokens, with Jinja's whitespace control.
//
// Behaves like jinja2's lexer configured as Hugging Face transformers does
// for chat templates: trim_blocks (the first newline after a block or
// comment tag is removed), lstrip_blocks (spaces and tabs before a block or
// comment tag at the start of a line are removed), "-" and "+" modifiers on
// tags, newlines normalised to "\n", one trailing newline dropped, and
// {% raw %} blocks. Comments produce no tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/error.h"

namespace lineage::jinja {

enum class Tok : uint8_t {
  kData, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof,
};

struct Token {
  Tok type = Tok::kEof;
  std::string text;  // data, name, decoded string literal or operator
  int64_t int_value = 0;
  double float_value = 0;
  Pos pos;
};

// Throws RenderError (kSyntax) with the position of the offending text.
std::vector<Token> Tokenize(std::string_view source);

}  // namespace lineage::jinja
