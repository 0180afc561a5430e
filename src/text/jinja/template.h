// A parsed Jinja template, rendered the way Hugging Face transformers renders
// chat templates (jinja2 ImmutableSandboxedEnvironment with trim_blocks,
// lstrip_blocks, loop controls, json.dumps-style tojson, raise_exception and
// strftime_now globals, default Undefined).
//
// Errors are values: a template that does not parse, and a render that
// fails (raise_exception, an undefined value misused, a type error, a limit
// reached) give a Status whose message starts with "line:column: ".
//
// Thread-safety: a Template is immutable after Parse; Render may be called
// from several threads at once. Each render owns its values.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/jinja/interpreter.h"

namespace lineage::jinja {

struct RenderOptions {
  // The time strftime_now formats; the local time at render when unset.
  std::optional<std::tm> now;
  RenderLimits limits;
};

class Template {
 public:
  static Result<Template> Parse(std::string_view source);

  // context: a JSON object whose keys become template variables.
  Result<std::string> Render(const nlohmann::ordered_json& context, const RenderOptions& options = {}) const;
  // The same with variables already converted (a kDict Value); the values
  // are shared with the caller, who must not use them concurrently.
  Result<std::string> Render(const Value& context, const RenderOptions& options = {}) const;

 private:
  explicit Template(std::shared_ptr<const Body> body) : body_(std::move(body)) {}
  std::shared_ptr<const Body> body_;
};

}  // namespace lineage::jinja
