// Fuzz targets "tokenizer_json" (a Hugging Face tokenizer.json, then an
// encode and a decode with the tokenizer it built) and "jinja" (a chat
// template parsed, then rendered with a small conversation under small
// limits, so that each run stays fast; the limits themselves are what a
// runaway template must hit).
#include <string>
#include <string_view>

#include "fuzz/fuzz_target.h"
#include "text/jinja/template.h"
#include "text/tokenizer.h"

namespace lineage::fuzz {
namespace {

int FuzzTokenizerJson(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  auto tok = text::Tokenizer::FromHfJson(json);
  if (!tok.ok()) return 0;
  auto ids = tok->Encode("Hello, world! Ünïcödé 123 <|im_start|>user\n", {.parse_special = true});
  (void)tok->Decode(ids);
  return 1;
}

int FuzzJinja(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json kContext = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
                 {"role": "assistant", "content": "yo", "tool_calls": [{"type": "function",
                  "function": {"name": "f", "arguments": {"a": 1, "b": [1, 2.5, null]}}}]},
                 {"role": "tool", "content": "42"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "n": 7, "s": "Wörld"})");
  auto t = jinja::Template::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!t.ok()) return 0;
  jinja::RenderOptions options;
  options.now = std::tm{};
  options.limits.max_memory_bytes = 32u << 20;
  options.limits.max_output_bytes = 1u << 20;
  options.limits.max_loop_iterations = 100'000;
  options.allow_mutation = size % 2 == 0;  // both sandboxes
  (void)t->Render(kContext, options);
  return 1;
}

LINEAGE_FUZZ_TARGET("tokenizer_json", FuzzTokenizerJson,
                    {"{", "}", "[", "]", ",", ":", "\"", "null", "true", "false", "\"model\"", "\"type\"", "\"BPE\"",
                     "\"WordPiece\"", "\"Unigram\"", "\"vocab\"", "\"merges\"", "\"added_tokens\"", "\"special\"",
                     "\"content\"", "\"id\"", "\"pre_tokenizer\"", "\"normalizer\"", "\"decoder\"", "\"ByteLevel\"",
                     "\"Split\"", "\"Sequence\"", "\"pretokenizers\"", "\"pattern\"", "\"Regex\"", "\"String\"",
                     "\"NFC\"", "\"Metaspace\"", "\"byte_fallback\"", "\"unk_token\"", "(?i:'s|'t)", "\\p{L}+", "[[[[[["},
                    1 << 16, {{"[", "]"}, {"{\"a\":", "}"}, {"(", ")"}, {"(?:", ")"}});

LINEAGE_FUZZ_TARGET("jinja", FuzzJinja,
                    {"{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "|", "~", "**", "//", "%", "*", "+", "-", "(", ")",
                     "[", "]", ".", ",", "=", "==", "if ", "else ", "elif ", "endif", "for ", "in ", "endfor", "set ",
                     "endset", "macro ", "endmacro", "call ", "endcall", "filter ", "endfilter", "namespace(",
                     "range(", "loop.", "messages", "message", "tools", "tojson", "join", "replace", "center",
                     "indent", "format", "string", "list", "map", "selectattr", "items()", ".append(", ".update(",
                     "raise_exception(", "9223372036854775807", "-9223372036854775808", "1e308", "'x'", "ns.l",
                     "[ns.l, ns.l]", " is divisibleby ", " not ", " and ", " or "},
                    1 << 14,
                    {{"(", ")"}, {"[", "]"}, {"{% if x %}", "{% endif %}"}, {"{% for i in [1] %}", "{% endfor %}"},
                     {"{% macro m() %}", "{% endmacro %}"}, {"x|string", ""}, {"-", ""}, {"not ", ""}});

}  // namespace
}  // namespace lineage::fuzz
