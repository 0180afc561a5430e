#include "text/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>

#include "text/utf8.h"

namespace lineage::text {
namespace {

// Starters (canonical combining class 0) with NFC_Quick_Check=Yes: below
// U+0300, general punctuation from U+2010 (U+2000/2001 are singletons),
// CJK punctuation, kana without the voicing marks, CJK ideographs, Hangul
// syllables, fullwidth ASCII and the common emoji blocks. Any composition
// would need a following character outside this set, so a string made only
// of these is already NFC.
bool Stable(char32_t cp) {
  return cp < 0x300 || (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FD) ||
         (cp >= 0x2010 && cp <= 0x205E) ||
         (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x1F300 && cp <= 0x1FAFF) ||
         (cp >= 0x3000 && cp <= 0x3029) || (cp >= 0xFF01 && cp <= 0xFF5E);
}

void AppendNfcOfValid(std::string_view s, std::string* out) {
  if (IsTriviallyNfc(s)) {
    out->append(s);
    return;
  }
  utf8proc_uint8_t* dst = nullptr;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                    static_cast<utf8proc_ssize_t>(s.size()), &dst,
                                    static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) {
    out->append(s);  // cannot happen for valid input; keep the text unchanged
  } else {
    out->append(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  }
  std::free(dst);
}

}  // namespace

bool IsTriviallyNfc(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0xCC) {  // ASCII, a continuation byte, or a lead of a code point below U+0300
      ++i;
      continue;
    }
    char32_t cp;
    size_t n = DecodeUtf8(s.substr(i), &cp);
    if (n == 0 || !Stable(cp)) return false;
    i += n;
  }
  return true;
}

std::string ToNfc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    size_t valid = ValidUtf8Prefix(s);
    AppendNfcOfValid(s.substr(0, valid), &out);
    s.remove_prefix(valid);
    if (!s.empty()) {  // one invalid byte, kept as is
      out.push_back(s[0]);
      s.remove_prefix(1);
    }
  }
  return out;
}

}  // namespace lineage::text
