#include "text/utf8.h"

namespace lineage::text {

size_t DecodeUtf8(std::string_view s, char32_t* cp) {
  if (s.empty()) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  unsigned char b0 = p[0];
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  size_t len;
  char32_t min_cp;
  char32_t c;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min_cp = 0x80, c = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min_cp = 0x800, c = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min_cp = 0x10000, c = b0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (p[i] & 0x3F);
  }
  if (c < min_cp || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string EncodeUtf8(char32_t cp) {
  std::string s;
  AppendUtf8(cp, &s);
  return s;
}

size_t ValidUtf8Prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t w;
      __builtin_memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= s.size()) break;
    char32_t cp;
    size_t n = DecodeUtf8(s.substr(i), &cp);
    if (n == 0) return i;
    i += n;
  }
  return i;
}

// Length of the longest prefix of `s` (at most 3 bytes) that could still be
// completed into a valid character; 0 when s[0] cannot start one.
static size_t CompletablePrefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  unsigned char b0 = p[0];
  size_t len;
  if (b0 >= 0xC2 && b0 <= 0xDF) len = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3;
  else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4;
  else return 0;
  if (s.size() >= len) return 0;  // long enough to decide: not incomplete
  for (size_t i = 1; i < s.size(); ++i) {
    unsigned char lo = 0x80, hi = 0xBF;
    if (i == 1) {  // second byte ranges that exclude overlongs and surrogates
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    }
    if (p[i] < lo || p[i] > hi) return 0;
  }
  return s.size();
}

size_t IncompleteUtf8Suffix(std::string_view s) {
  size_t n = s.size();
  for (size_t k = 1; k <= 3 && k <= n; ++k) {
    unsigned char b = static_cast<unsigned char>(s[n - k]);
    if ((b & 0xC0) != 0x80) {  // a lead byte (or ASCII): the candidate start
      return CompletablePrefix(s.substr(n - k)) == k ? k : 0;
    }
  }
  return 0;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    size_t n = DecodeUtf8(s.substr(i), &cp);
    if (n > 0) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    // Skip the maximal subpart: a lead byte plus the continuation bytes that
    // were still plausible for it.
    size_t bad = 1;
    std::string_view rest = s.substr(i);
    for (size_t k = 2; k <= 3 && k <= rest.size(); ++k) {
      if (CompletablePrefix(rest.substr(0, k)) != k) break;
      bad = k;
    }
    AppendUtf8(kReplacementChar, &out);
    i += bad;
  }
  return out;
}

}  // namespace lineage::text
