// `lineage tokenize`: shows how a model's tokenizer splits some text.
//   lineage tokenize --model PATH (--text STR | --file F) [--special] [--ids-only]
// PATH is a model directory (tokenizer.json), a tokenizer.json or a .gguf.
// Prints one line per token (index, id, piece) then the ids on one line.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/command.h"
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
  bool special = false;
  bool ids_only = false;
};

int Run(const Options& o) {
  std::string input = o.text;
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "tokenize: cannot open %s\n", o.file.c_str());
      return 2;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    input = ss.str();
  }
  auto tok = text::LoadTokenizer(o.model);
  if (!tok.ok()) {
    std::fprintf(stderr, "tokenize: %s\n", tok.status().ToString().c_str());
    return 2;
  }
  std::vector<text::TokenId> ids = tok->Encode(input, {.parse_special = o.special, .add_special = false});
  if (!o.ids_only) {
    for (size_t i = 0; i < ids.size(); ++i) {
      std::printf("%6zu %8d  %s%s\n", i, ids[i], Quote(tok->TokenBytes(ids[i])).c_str(),
                  tok->IsControl(ids[i]) ? "  (control)" : "");
    }
    std::printf("%zu tokens, %zu bytes\n", ids.size(), input.size());
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
                t->excludes(f);
                f->excludes(t);
                sub.add_flag("--special", o->special, "Parse control tokens such as <|im_start|> written in the text");
                sub.add_flag("--ids-only", o->ids_only, "Print only the ids");
                return std::function<int()>([o] {
                  if (o->text.empty() && o->file.empty()) {
                    std::fprintf(stderr, "tokenize: give --text or --file\n");
                    return 2;
                  }
                  return Run(*o);
                });
              }}};

}  // namespace
}  // namespace lineage::cli
