#include "text/jinja/template.h"

#include <new>

#include "text/jinja/lexer.h"
#include "text/jinja/parser.h"

namespace lineage::jinja {
namespace {

Status ToStatus(const RenderError& e, const char* stage) {
  std::string where = e.pos().line > 0
                          ? std::to_string(e.pos().line) + ":" + std::to_string(e.pos().column) + ": "
                          : std::string();
  std::string kind;
  switch (e.kind()) {
    case ErrorKind::kSyntax: kind = "syntax error: "; break;
    case ErrorKind::kUndefined: kind = "undefined: "; break;
    case ErrorKind::kType: kind = "type error: "; break;
    case ErrorKind::kRaised: kind = "template raised: "; break;
    case ErrorKind::kSecurity: kind = "sandbox: "; break;
    // Only the output limit is kOutOfRange: a caller that bounds the output
    // (to what its context can hold) can tell "too long" from a template
    // that loops or recurses too far, which is the template's own error.
    case ErrorKind::kOutputLimit: return OutOfRange(where + stage + " limit: " + e.what());
    case ErrorKind::kLimit: return InvalidArgument(where + stage + " limit: " + e.what());
  }
  return InvalidArgument(where + kind + e.what());
}

// Runs a parse or render step, turning whatever it throws into a Status.
template <typename T, typename F>
Result<T> Guarded(const char* stage, F step) {
  try {
    return step();
  } catch (const RenderError& e) {
    return ToStatus(e, stage);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(std::string("out of memory during template ") + stage);
  } catch (const std::exception& e) {
    return Internal(std::string("template ") + stage + ": " + e.what());
  }
}

}  // namespace

Result<Template> Template::Parse(std::string_view source) {
  return Guarded<Template>("parse", [&] {
    return Template(std::make_shared<Body>(ParseTokens(Tokenize(source))));
  });
}

Result<std::string> Template::Render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  if (!context.is_object()) return InvalidArgument("template context must be a JSON object");
  Value converted;
  Result<bool> ok = Guarded<bool>("render", [&] {
    converted = Value::FromJson(context);
    return true;
  });
  if (!ok.ok()) return ok.status();
  return Render(converted, options);
}

Result<std::string> Template::Render(const Value& context, const RenderOptions& options) const {
  if (!context.is_dict()) return InvalidArgument("template context must be a dict");
  std::tm now{};
  if (options.now) {
    now = *options.now;
  } else {
    std::time_t t = std::time(nullptr);
    localtime_r(&t, &now);
  }
  return Guarded<std::string>("render", [&] {
    Interpreter interp(options.limits, now, options.allow_mutation);
    return interp.Render(*body_, context);
  });
}

}  // namespace lineage::jinja
