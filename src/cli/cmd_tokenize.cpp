// `lineage tokenize`: shows how a model's tokenizer splits some text.
//   lineage tokenize --model PATH (--text STR | --file F | --chat FILE.json)
//                    [--template FILE.jinja] [--special] [--ids-only]
// PATH is a model directory (tokenizer.json), a tokenizer.json or a .gguf.
// --chat renders a conversation with the model's chat template (or
// --template) first: the file holds an array of messages or an object with
// "messages", optional "tools", "add_generation_prompt" (default true) and
// any other template variables (enable_thinking, ...). The rendered text is
// encoded with its control tokens parsed.
// Prints one line per token (index, id, piece) then the ids on one line.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli/command.h"
#include "core/read_file.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace lineage::cli {
namespace {

// The piece as a quoted, escaped string: control characters and bytes that
// are not (yet) valid UTF-8 are written as escapes.
std::string Quote(std::string_view bytes) {
  std::string out = "\"";
  size_t i = 0;
  while (i < bytes.size()) {
    char32_t cp;
    size_t n = text::DecodeUtf8(bytes.substr(i), &cp);
    char buf[8];
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(bytes[i]));
      out += buf;
      ++i;
      continue;
    }
    if (cp == '\n') out += "\\n";
    else if (cp == '\r') out += "\\r";
    else if (cp == '\t') out += "\\t";
    else if (cp == '"') out += "\\\"";
    else if (cp == '\\') out += "\\\\";
    else if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(bytes.data() + i, n);
    }
    i += n;
  }
  return out + "\"";
}

struct Options {
  std::string model;
  std::string text;
  std::string file;
  std::string chat;
  std::string template_file;
  bool special = false;
  bool ids_only = false;
};

// Text to tokenize, a chat or a template: far below this in any real use.
constexpr uint64_t kMaxInputFileBytes = uint64_t{256} << 20;

Result<std::string> ReadFile(const std::string& path) { return ReadFileBounded(path, kMaxInputFileBytes); }

// The chat file rendered with the template.
Result<std::string> RenderChat(const Options& o, const text::Tokenizer& tok) {
  LINEAGE_ASSIGN_OR_RETURN(std::string chat_json, ReadFile(o.chat));
  std::string source = tok.chat_template();
  if (!o.template_file.empty()) {
    LINEAGE_ASSIGN_OR_RETURN(source, ReadFileBounded(o.template_file, kMaxTemplateFileBytes));
  }
  if (source.empty()) return NotFound("the model has no chat template; give --template");
  auto j = nlohmann::ordered_json::parse(chat_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(o.chat + " is not JSON");
  ChatRequest req;
  if (j.is_array()) {
    req.messages = j;
  } else if (j.is_object() && j.contains("messages") && j["messages"].is_array()) {
    for (auto& [key, value] : j.items()) {
      if (key == "messages") req.messages = value;
      else if (key == "tools") req.tools = value;
      else if (key == "add_generation_prompt" && value.is_boolean()) req.add_generation_prompt = value.get<bool>();
      else req.extra[key] = value;
    }
  } else {
    return InvalidArgument(o.chat + ": expected an array of messages or an object with \"messages\"");
  }
  auto token_text = [&tok](text::TokenId id) { return std::string(id >= 0 ? tok.TokenText(id) : ""); };
  LINEAGE_ASSIGN_OR_RETURN(ChatTemplate tmpl, ChatTemplate::Create(source, token_text(tok.bos_id()), token_text(tok.eos_id())));
  return tmpl.Apply(req);
}

int Run(const Options& o) {
  auto tok = text::LoadTokenizer(o.model);
  if (!tok.ok()) {
    std::fprintf(stderr, "tokenize: %s\n", tok.status().ToString().c_str());
    return 2;
  }
  Result<std::string> input = o.text;
  if (!o.file.empty()) input = ReadFile(o.file);
  if (!o.chat.empty()) input = RenderChat(o, *tok);
  if (!input.ok()) {
    std::fprintf(stderr, "tokenize: %s\n", input.status().ToString().c_str());
    return 2;
  }
  // A rendered chat is full of control tokens that must be parsed as such.
  const bool parse_special = o.special || !o.chat.empty();
  std::vector<text::TokenId> ids = tok->Encode(*input, {.parse_special = parse_special, .add_special = false});
  if (!o.ids_only) {
    for (size_t i = 0; i < ids.size(); ++i) {
      std::printf("%6zu %8d  %s%s\n", i, ids[i], Quote(tok->TokenBytes(ids[i])).c_str(),
                  tok->IsControl(ids[i]) ? "  (control)" : "");
    }
    std::printf("%zu tokens, %zu bytes\n", ids.size(), input->size());
  }
  for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
  std::printf("\n");
  return 0;
}

Register reg{{"tokenize", "Show the token ids and pieces of a text for a model's tokenizer", [](CLI::App& sub) {
                auto o = std::make_shared<Options>();
                sub.add_option("--model", o->model, "Model directory, tokenizer.json or .gguf file")->required();
                auto* t = sub.add_option("--text", o->text, "Text to tokenize");
                auto* f = sub.add_option("--file", o->file, "File whose bytes to tokenize");
                auto* c = sub.add_option("--chat", o->chat, "JSON conversation to render with the chat template");
                sub.add_option("--template", o->template_file, "Jinja chat template to use instead of the model's");
                t->excludes(f)->excludes(c);
                f->excludes(t)->excludes(c);
                c->excludes(t)->excludes(f);
                sub.add_flag("--special", o->special, "Parse control tokens such as <|im_start|> written in the text");
                sub.add_flag("--ids-only", o->ids_only, "Print only the ids");
                return std::function<int()>([o] {
                  if (o->text.empty() && o->file.empty() && o->chat.empty()) {
                    std::fprintf(stderr, "tokenize: give --text, --file or --chat\n");
                    return 2;
                  }
                  return Run(*o);
                });
              }}};

}  // namespace
}  // namespace lineage::cli
