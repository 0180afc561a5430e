#include "text/jinja/json_dump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <utf8proc.h>

#include "text/jinja/error.h"
#include "text/jinja/render_memory.h"

namespace lineage::jinja {
namespace {

void AppendU16(uint32_t unit, std::string& out) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "\\u%04x", unit);
  out += buf;
}

class Dumper {
 public:
  Dumper(const JsonOptions& o, std::string& out) : o_(o), out_(out) {}

  void Dump(const Value& v, int level) {
    if (level > 512) Fail(ErrorKind::kLimit, "tojson: maximum recursion depth exceeded while encoding a JSON object");
    switch (v.kind()) {
      case Kind::kNone: out_ += "null"; return;
      case Kind::kBool: out_ += v.as_bool() ? "true" : "false"; return;
      case Kind::kInt: out_ += std::to_string(v.as_int()); return;
      case Kind::kFloat: {
        double f = v.as_double();
        if (std::isnan(f)) out_ += "NaN";
        else if (std::isinf(f)) out_ += f < 0 ? "-Infinity" : "Infinity";
        else AppendPythonFloat(f, out_);
        return;
      }
      case Kind::kString:
        // An escaped character takes at most 12 bytes (a surrogate pair).
        CheckRoom(out_.size() + CheckRoomFor(v.str().size(), o_.ensure_ascii ? 12 : 6));
        AppendJsonString(v.str(), o_.ensure_ascii, out_);
        return;
      case Kind::kList: {
        const List& items = v.list();
        if (items.empty()) { out_ += "[]"; return; }
        out_ += '[';
        for (size_t k = 0; k < items.size(); ++k) {
          if (k) out_ += o_.item_separator;
          Newline(level + 1);
          Dump(items[k], level + 1);
          CheckRoom(out_.size());
        }
        Newline(level);
        out_ += ']';
        return;
      }
      case Kind::kDict: {
        const auto& items = v.dict().items();
        if (items.empty()) { out_ += "{}"; return; }
        std::vector<const std::pair<std::string, Value>*> order;
        order.reserve(items.size());
        for (const auto& kv : items) order.push_back(&kv);
        if (o_.sort_keys) {
          std::stable_sort(order.begin(), order.end(),
                           [](const auto* a, const auto* b) { return a->first < b->first; });
        }
        out_ += '{';
        for (size_t k = 0; k < order.size(); ++k) {
          if (k) out_ += o_.item_separator;
          Newline(level + 1);
          AppendJsonString(order[k]->first, o_.ensure_ascii, out_);
          out_ += o_.key_separator;
          Dump(order[k]->second, level + 1);
        }
        Newline(level);
        out_ += '}';
        return;
      }
      default:
        Fail(ErrorKind::kType, "Object of type " + v.TypeName() + " is not JSON serializable");
    }
  }

 private:
  void Newline(int level) {
    if (o_.indent < 0 && !o_.has_indent_text) return;
    size_t unit = o_.has_indent_text ? o_.indent_text.size() : static_cast<size_t>(o_.indent);
    CheckRoom(out_.size() + 1 + CheckRoomFor(static_cast<uint64_t>(level), unit));
    out_ += '\n';
    for (int k = 0; k < level; ++k) {
      if (o_.has_indent_text) out_ += o_.indent_text;
      else out_.append(unit, ' ');
    }
  }

  const JsonOptions& o_;
  std::string& out_;
};

}  // namespace

void AppendJsonString(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || (ensure_ascii && c == 0x7f)) AppendU16(c, out);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    if (!ensure_ascii) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                              static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
    if (n <= 0) {  // not UTF-8: keep the byte's value as Python's surrogateescape would
      AppendU16(0xdc00 | c, out);
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      uint32_t v = static_cast<uint32_t>(cp) - 0x10000;
      AppendU16(0xd800 | (v >> 10), out);
      AppendU16(0xdc00 | (v & 0x3ff), out);
    } else {
      AppendU16(static_cast<uint32_t>(cp), out);
    }
    i += static_cast<size_t>(n);
  }
  out += '"';
}

void DumpJson(const Value& value, const JsonOptions& options, std::string& out) {
  Dumper(options, out).Dump(value, 0);
}

}  // namespace lineage::jinja
