// Parser: tokens -> syntax tree, following jinja2's grammar and operator
// precedence (condexpr < or < and < not < compare < + - < ~ < * / // % < ** <
// unary < filters and tests < postfix). Unknown filters and tests, unknown
// tags and unclosed blocks are syntax errors with the position of the
// offending token, as jinja2 reports them when the template is compiled.
#pragma once

#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace lineage::jinja {

// Throws RenderError (kSyntax).
Body ParseTokens(const std::vector<Token>& tokens);

}  // namespace lineage::jinja
