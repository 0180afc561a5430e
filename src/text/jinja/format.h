// Python string formatting for templates: printf-style `fmt % args` (and
// jinja2's `format` filter, which is built on it) and str.format.
//
// printf-style supports the flags "-+ #0", width, precision (also `*`),
// mappings (`%(name)s`) and the conversions s r a d i u f F e E g G x X o c %.
// str.format supports auto-numbered, numbered and named fields, attribute and
// index lookups are not supported, and format specs of the form
// [[fill]align][sign][0][width][.precision][type]. Errors are TypeError-kind
// RenderErrors, as in Python.
#pragma once

#include <string>

#include "text/jinja/value.h"

namespace lineage::jinja {

// args: a tuple (several values), a dict (for %(name)s) or any single value.
std::string PercentFormat(const std::string& fmt, const Value& args);
std::string StrFormat(const std::string& fmt, const CallArgs& args);

}  // namespace lineage::jinja
