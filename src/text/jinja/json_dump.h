// Python's json.dumps for template values, as the chat-template `tojson`
// filter of Hugging Face transformers calls it:
//   json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
// Output matches CPython byte for byte: separators default to (", ", ": ")
// without indent and ("," , ": ") with it, floats use float.__repr__, NaN and
// infinities are written as NaN / Infinity, key order is insertion order
// unless sort_keys. Values JSON cannot hold (Undefined, namespaces,
// callables) raise a TypeError-kind RenderError. The output is checked
// against the render's memory budget as it grows (render_memory.h).
#pragma once

#include <cstdint>
#include <string>

#include "text/jinja/value.h"

namespace lineage::jinja {

struct JsonOptions {
  bool ensure_ascii = false;
  int64_t indent = -1;  // -1: None (one line)
  std::string indent_text;  // used when indent is given as a string
  bool has_indent_text = false;
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};

void DumpJson(const Value& value, const JsonOptions& options, std::string& out);
// A JSON string literal for s (with quotes).
void AppendJsonString(const std::string& s, bool ensure_ascii, std::string& out);

}  // namespace lineage::jinja
