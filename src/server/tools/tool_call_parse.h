// Parsing the body of one <tool_call>...</tool_call> block from the model's
// output, in either format the Qwen family emits:
//   Qwen3.5 (XML):  <function=NAME>\n<parameter=ARG>\nVALUE\n</parameter>\n...</function>
//   Qwen3 (JSON):   {"name": NAME, "arguments": {...}}
// XML parameter values are text; they are typed by the tool's JSON schema
// (a parameter declared "string" stays a string, any other is read as JSON
// when it parses), as the template wrote them with `tojson` for non-strings.
// Pure functions; no state.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace lineage::server {

struct ToolCall {
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();  // always an object
};

// `body` is the text between <tool_call> and </tool_call>. `tools` is the
// request's tool list in OpenAI function form (may be empty). An unparsable
// body is kInvalidArgument; the caller then treats it as plain text.
Result<ToolCall> ParseToolCallBody(std::string_view body, const nlohmann::ordered_json& tools);

// The JSON-schema type of parameter `arg` of tool `name` as XML values are
// typed by it ("string" wins in a list of types); "" when unknown.
std::string ParameterSchemaType(const nlohmann::ordered_json& tools, const std::string& name, const std::string& arg);

}  // namespace lineage::server
