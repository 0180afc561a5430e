#include "text/jinja/string_util.h"

#include <algorithm>
#include <cstdlib>

#include <utf8proc.h>

namespace lineage::jinja {

bool IsPySpace(int32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20);
  switch (cp) {
    case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
      return true;
    default: return cp >= 0x2000 && cp <= 0x200a;
  }
}

void AppendUtf8(int32_t cp, std::string& out) {
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

size_t DecodeAt(std::string_view s, size_t i, int32_t* cp) {
  auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                            static_cast<utf8proc_ssize_t>(s.size() - i), cp);
  if (n <= 0) {
    *cp = static_cast<unsigned char>(s[i]);
    return 1;
  }
  return static_cast<size_t>(n);
}

std::vector<int32_t> ToCodepoints(std::string_view s) {
  std::vector<int32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    i += DecodeAt(s, i, &cp);
    out.push_back(cp);
  }
  return out;
}

std::string FromCodepoints(const std::vector<int32_t>& cps) {
  std::string out;
  for (int32_t cp : cps) AppendUtf8(cp, out);
  return out;
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

size_t CodepointCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++n;
  }
  return n;
}

std::string_view PyStrip(std::string_view s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e) {
      int32_t cp;
      size_t n = DecodeAt(s, b, &cp);
      if (!IsPySpace(cp)) break;
      b += n;
    }
  }
  if (right) {
    while (e > b) {
      size_t start = e - 1;
      while (start > b && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
      int32_t cp;
      DecodeAt(s, start, &cp);
      if (!IsPySpace(cp)) break;
      e = start;
    }
  }
  return s.substr(b, e - b);
}

std::string_view PyRstrip(std::string_view s) { return PyStrip(s, false, true); }

std::string PyStripChars(std::string_view s, std::string_view chars, bool left, bool right) {
  std::vector<int32_t> set = ToCodepoints(chars);
  std::vector<int32_t> cps = ToCodepoints(s);
  auto in = [&](int32_t cp) { return std::find(set.begin(), set.end(), cp) != set.end(); };
  size_t b = 0, e = cps.size();
  if (left) while (b < e && in(cps[b])) ++b;
  if (right) while (e > b && in(cps[e - 1])) --e;
  return FromCodepoints(std::vector<int32_t>(cps.begin() + static_cast<long>(b), cps.begin() + static_cast<long>(e)));
}

std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t f = s.find(*sep, pos);
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t i = 0;
  while (true) {
    while (i < s.size()) {  // skip whitespace
      int32_t cp;
      size_t n = DecodeAt(s, i, &cp);
      if (!IsPySpace(cp)) break;
      i += n;
    }
    if (i >= s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.emplace_back(PyRstrip(s.substr(i)));
      break;
    }
    size_t j = i;
    while (j < s.size()) {
      int32_t cp;
      size_t n = DecodeAt(s, j, &cp);
      if (IsPySpace(cp)) break;
      j += n;
    }
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> PyRsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  if (!sep || maxsplit < 0) return PySplit(s, sep, maxsplit);
  std::vector<std::string> out;
  size_t end = s.size();
  while (static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < sep->size()) break;
    size_t f = s.rfind(*sep, end - sep->size());
    if (f == std::string_view::npos) break;
    out.emplace_back(s.substr(f + sep->size(), end - f - sep->size()));
    end = f;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<std::string> PyReplace(std::string_view s, std::string_view old_text, std::string_view new_text,
                                     int64_t count, size_t max_bytes) {
  std::string out;
  if (old_text.empty()) {
    int64_t done = 0;
    size_t i = 0;
    while (i <= s.size()) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
        if (out.size() > max_bytes) return std::nullopt;
      }
      if (i == s.size()) break;
      int32_t cp;
      size_t n = DecodeAt(s, i, &cp);
      out.append(s.substr(i, n));
      i += n;
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t f = s.find(old_text, pos);
    if (f == std::string_view::npos) break;
    out.append(s.substr(pos, f - pos));
    out += new_text;
    if (out.size() > max_bytes) return std::nullopt;
    pos = f + old_text.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

namespace {

template <typename F>
std::string MapCodepoints(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    int32_t cp;
    i += DecodeAt(s, i, &cp);
    AppendUtf8(f(cp), out);
  }
  return out;
}

bool IsCased(int32_t cp) {
  return utf8proc_toupper(cp) != cp || utf8proc_tolower(cp) != cp ||
         utf8proc_category(cp) == UTF8PROC_CATEGORY_LT;
}

}  // namespace

std::string PyUpper(std::string_view s) { return MapCodepoints(s, utf8proc_toupper); }
std::string PyLower(std::string_view s) { return MapCodepoints(s, utf8proc_tolower); }

std::string PyTitle(std::string_view s) {
  bool prev_cased = false;
  return MapCodepoints(s, [&](int32_t cp) {
    int32_t r = prev_cased ? utf8proc_tolower(cp) : utf8proc_totitle(cp);
    prev_cased = IsCased(cp);
    return r;
  });
}

std::string PyCapitalize(std::string_view s) {
  bool first = true;
  return MapCodepoints(s, [&](int32_t cp) {
    int32_t r = first ? utf8proc_totitle(cp) : utf8proc_tolower(cp);
    first = false;
    return r;
  });
}

int64_t PyFind(std::string_view s, std::string_view needle) {
  size_t f = s.find(needle);
  if (f == std::string_view::npos) return -1;
  return static_cast<int64_t>(CodepointCount(s.substr(0, f)));
}

int64_t PyRfind(std::string_view s, std::string_view needle) {
  size_t f = s.rfind(needle);
  if (f == std::string_view::npos) return -1;
  return static_cast<int64_t>(CodepointCount(s.substr(0, f)));
}

int64_t PyCount(std::string_view s, std::string_view needle) {
  if (needle.empty()) return static_cast<int64_t>(CodepointCount(s)) + 1;
  int64_t n = 0;
  for (size_t pos = s.find(needle); pos != std::string_view::npos; pos = s.find(needle, pos + needle.size())) ++n;
  return n;
}

std::string DecodePythonEscapes(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  auto hex = [&](size_t at, size_t len, int32_t* cp) {
    if (at + len > body.size()) return false;
    std::string h(body.substr(at, len));
    if (!std::all_of(h.begin(), h.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) return false;
    *cp = static_cast<int32_t>(std::strtol(h.c_str(), nullptr, 16));
    return true;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    int32_t cp = 0;
    switch (e) {
      case '\n': break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
        if (hex(i + 1, 2, &cp)) { AppendUtf8(cp, out); i += 2; } else { out += "\\x"; }
        break;
      case 'u':
        if (hex(i + 1, 4, &cp)) { AppendUtf8(cp, out); i += 4; } else { out += "\\u"; }
        break;
      case 'U':
        if (hex(i + 1, 8, &cp)) { AppendUtf8(cp, out); i += 8; } else { out += "\\U"; }
        break;
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            v = v * 8 + (body[++i] - '0');
          }
          AppendUtf8(v, out);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace lineage::jinja
