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
    case ErrorKind::kLimit: return OutOfRange(where + stage + " limit: " + e.what());
  }
  return InvalidArgument(where + kind + e.what());
}

}  // namespace

Result<Template> Template::Parse(std::string_view source) {
  try {
    auto body = std::make_shared<Body>(ParseTokens(Tokenize(source)));
    return Template(std::move(body));
  } catch (const RenderError& e) {
    return ToStatus(e, "parse");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory parsing template");
  } catch (const std::exception& e) {
    return Internal(std::string("parsing template: ") + e.what());
  }
}

Result<std::string> Template::Render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  if (!context.is_object()) return InvalidArgument("template context must be a JSON object");
  try {
    return Render(Value::FromJson(context), options);
  } catch (const RenderError& e) {
    return ToStatus(e, "render");
  }
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
  try {
    Interpreter interp(options.limits, now);
    return interp.Render(*body_, context);
  } catch (const RenderError& e) {
    return ToStatus(e, "render");
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory rendering template");
  } catch (const std::exception& e) {
    return Internal(std::string("rendering template: ") + e.what());
  }
}

}  // namespace lineage::jinja
