#include "text/jinja/format.h"

#include <cmath>
#include <algorithm>
#include <cstdio>

#include "text/jinja/error.h"
#include "text/jinja/render_memory.h"
#include "text/jinja/ops.h"
#include "text/jinja/string_util.h"

namespace lineage::jinja {
namespace {

// Widths and precisions a format may ask for (Python allows any; a chat
// template needs a few columns).
constexpr int kMaxFormatWidth = 100000;

struct Spec {
  std::string flags;
  int width = -1;
  int precision = -1;
  char type = 's';
};

std::string Pad(const std::string& s, const Spec& spec, char align, char fill) {
  int64_t len = static_cast<int64_t>(CodepointCount(s));
  if (spec.width <= len) return s;
  size_t pad = static_cast<size_t>(spec.width - len);
  if (align == '<') return s + std::string(pad, fill);
  if (align == '^') return std::string(pad / 2, fill) + s + std::string(pad - pad / 2, fill);
  if (align == '=' && !s.empty() && (s[0] == '-' || s[0] == '+' || s[0] == ' ')) {
    return s.substr(0, 1) + std::string(pad, fill) + s.substr(1);
  }
  return std::string(pad, fill) + s;
}

// snprintf into a string of the size it needs (widths and precisions are
// bounded by kMaxFormatWidth, so it is small).
template <typename T>
std::string CFormat(const char* format, T value) {
  int n = std::snprintf(nullptr, 0, format, value);
  if (n < 0) Fail(ErrorKind::kType, "bad format");
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, value);
  out.resize(static_cast<size_t>(n));
  return out;
}

// One numeric or string conversion, with C printf semantics where Python
// agrees with them.
std::string Convert(const Value& v, const Spec& spec) {
  char t = spec.type;
  if (t == 's' || t == 'r' || t == 'a') {
    std::string s;
    if (t == 's') v.AppendStr(s);
    else v.AppendRepr(s);
    if (spec.precision >= 0) {
      std::vector<int32_t> cps = ToCodepoints(s);
      if (cps.size() > static_cast<size_t>(spec.precision)) cps.resize(static_cast<size_t>(spec.precision));
      s = FromCodepoints(cps);
    }
    bool left = spec.flags.find('-') != std::string::npos;
    return Pad(s, spec, left ? '<' : '>', ' ');
  }
  if (t == 'c') {
    std::string s;
    if (v.is_string() && CodepointCount(v.str()) == 1) s = v.str();
    else if (v.kind() == Kind::kInt) {
      if (v.as_int() < 0 || v.as_int() > 0x10ffff) Fail(ErrorKind::kLimit, "%c arg not in range(0x110000)");
      AppendUtf8(static_cast<int32_t>(v.as_int()), s);
    }
    else Fail(ErrorKind::kType, "%c requires int or char");
    return Pad(s, spec, spec.flags.find('-') != std::string::npos ? '<' : '>', ' ');
  }
  if (!v.is_number()) {
    if (v.is_undefined()) FailUndefined(v);
    Fail(ErrorKind::kType, std::string("%") + t + " format: a real number is required, not " + v.TypeName());
  }
  std::string cfmt = "%" + spec.flags;
  if (spec.width >= 0) cfmt += std::to_string(spec.width);
  if (spec.precision >= 0) cfmt += "." + std::to_string(spec.precision);
  if (t == 'd' || t == 'i' || t == 'u' || t == 'x' || t == 'X' || t == 'o') {
    int64_t i = v.kind() == Kind::kFloat ? TruncToInt(v.as_double()) : v.as_int();
    char ct = t == 'i' || t == 'u' ? 'd' : t;
    if (ct != 'd' && i < 0) {  // Python prints -ff, not two's complement
      std::string s = CFormat((cfmt + "ll" + ct).c_str(), static_cast<unsigned long long>(0) - static_cast<unsigned long long>(i));
      size_t first = s.find_first_not_of(' ');
      s.insert(first == std::string::npos ? 0 : first, "-");
      return s;
    }
    return CFormat((cfmt + "ll" + ct).c_str(), static_cast<long long>(i));
  }
  if (std::string("fFeEgG").find(t) != std::string::npos) return CFormat((cfmt + t).c_str(), v.as_double());
  Fail(ErrorKind::kType, std::string("unsupported format character '") + t + "'");
}

int ParseInt(const std::string& s, size_t& i) {
  int n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    n = n * 10 + (s[i++] - '0');
    if (n > kMaxFormatWidth) Fail(ErrorKind::kLimit, "format width too large");
  }
  return n;
}

// A width or precision given as `*`: an int within kMaxFormatWidth.
int StarArg(const Value& v) {
  if (v.kind() != Kind::kInt && v.kind() != Kind::kBool) Fail(ErrorKind::kType, "* wants int");
  if (v.as_int() > kMaxFormatWidth || v.as_int() < -kMaxFormatWidth) Fail(ErrorKind::kLimit, "format width too large");
  return static_cast<int>(v.as_int());
}

}  // namespace

std::string PercentFormat(const std::string& fmt, const Value& args) {
  std::vector<Value> positional;
  const Dict* mapping = args.is_dict() ? &args.dict() : nullptr;
  if (args.is_tuple()) positional = args.list();
  else positional.push_back(args);
  size_t next = 0;
  bool used_mapping = false;
  auto take = [&]() -> const Value& {
    if (next >= positional.size()) Fail(ErrorKind::kType, "not enough arguments for format string");
    return positional[next++];
  };
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) Fail(ErrorKind::kType, "incomplete format");
    const Value* arg = nullptr;
    if (fmt[i] == '(') {
      size_t close = fmt.find(')', i);
      if (close == std::string::npos) Fail(ErrorKind::kType, "incomplete format key");
      if (!mapping) Fail(ErrorKind::kType, "format requires a mapping");
      const Value* v = mapping->Find(fmt.substr(i + 1, close - i - 1));
      if (!v) Fail(ErrorKind::kType, "KeyError: '" + fmt.substr(i + 1, close - i - 1) + "'");
      arg = v;
      used_mapping = true;
      i = close + 1;
    }
    Spec spec;
    while (i < fmt.size() && std::string("-+ #0").find(fmt[i]) != std::string::npos) spec.flags += fmt[i++];
    if (i < fmt.size() && fmt[i] == '*') {
      spec.width = StarArg(take());
      if (spec.width < 0) {  // Python: a negative * width left-justifies
        spec.flags += '-';
        spec.width = -spec.width;
      }
      ++i;
    } else {
      spec.width = (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) ? ParseInt(fmt, i) : -1;
    }
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      if (i < fmt.size() && fmt[i] == '*') {
        spec.precision = std::max(0, StarArg(take()));
        ++i;
      } else {
        spec.precision = ParseInt(fmt, i);
      }
    }
    while (i < fmt.size() && (fmt[i] == 'l' || fmt[i] == 'h' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) Fail(ErrorKind::kType, "incomplete format");
    spec.type = fmt[i];
    if (spec.type == '%') {
      out += '%';
      continue;
    }
    out += Convert(arg ? *arg : take(), spec);
    CheckRoom(out.size());
  }
  if (!used_mapping && !mapping && next < positional.size()) {
    Fail(ErrorKind::kType, "not all arguments converted during string formatting");
  }
  return out;
}

std::string StrFormat(const std::string& fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; ++i; continue; }
      Fail(ErrorKind::kType, "Single '}' encountered in format string");
    }
    if (c != '{') { out += c; continue; }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; ++i; continue; }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) Fail(ErrorKind::kType, "Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec_text;
    size_t colon = field.find(':');
    if (colon != std::string::npos) { spec_text = field.substr(colon + 1); field.resize(colon); }
    char conversion = 0;
    size_t bang = field.find('!');
    if (bang != std::string::npos) { conversion = bang + 1 < field.size() ? field[bang + 1] : 0; field.resize(bang); }
    const Value* arg = nullptr;
    if (field.empty()) {
      if (auto_index >= args.positional.size()) Fail(ErrorKind::kType, "Replacement index out of range");
      arg = &args.positional[auto_index++];
    } else if (std::isdigit(static_cast<unsigned char>(field[0]))) {
      size_t k = std::stoul(field);
      if (k >= args.positional.size()) Fail(ErrorKind::kType, "Replacement index out of range");
      arg = &args.positional[k];
    } else {
      for (const auto& kv : args.keyword) {
        if (kv.first == field) arg = &kv.second;
      }
      if (!arg) Fail(ErrorKind::kType, "KeyError: '" + field + "'");
    }
    // [[fill]align][sign][0][width][.precision][type]
    Spec spec;
    char align = 0, fill = ' ';
    size_t p = 0;
    if (spec_text.size() >= 2 && std::string("<>^").find(spec_text[1]) != std::string::npos) {
      fill = spec_text[0];
      align = spec_text[1];
      p = 2;
    } else if (!spec_text.empty() && std::string("<>^").find(spec_text[0]) != std::string::npos) {
      align = spec_text[0];
      p = 1;
    }
    if (p < spec_text.size() && (spec_text[p] == '+' || spec_text[p] == '-' || spec_text[p] == ' ')) spec.flags += spec_text[p++];
    if (p < spec_text.size() && spec_text[p] == '0') { spec.flags += '0'; ++p; }
    spec.width = (p < spec_text.size() && std::isdigit(static_cast<unsigned char>(spec_text[p]))) ? ParseInt(spec_text, p) : -1;
    if (p < spec_text.size() && spec_text[p] == '.') { ++p; spec.precision = ParseInt(spec_text, p); }
    if (p < spec_text.size()) spec.type = spec_text[p++];
    else spec.type = arg->is_number() && arg->kind() != Kind::kBool && !conversion ? (arg->kind() == Kind::kFloat ? 'r' : 'd') : 's';
    if (p != spec_text.size()) Fail(ErrorKind::kType, "Invalid format specifier '" + spec_text + "'");
    if (conversion == 'r' || conversion == 'a') spec.type = 'r';
    std::string piece;
    if (spec.type == 'r' && !conversion) {  // a float without a type: Python's repr-like str
      arg->AppendStr(piece);
    } else {
      Spec inner = spec;
      inner.width = -1;
      inner.flags.erase(std::remove(inner.flags.begin(), inner.flags.end(), '0'), inner.flags.end());
      piece = Convert(*arg, inner);
    }
    bool numeric = arg->is_number() && spec.type != 's';
    if (!align && spec.flags.find('0') != std::string::npos) {
      align = '=';
      fill = '0';
    }
    if (!align) align = numeric ? '>' : '<';
    out += Pad(piece, spec, align, fill);
    CheckRoom(out.size());
  }
  return out;
}

}  // namespace lineage::jinja
