#include "fuzz/mutator.h"

#include <cstring>

namespace lineage::fuzz {
namespace {

// Values at the edges of integer types and of the parsers' limits.
const char* const kInterestingText[] = {
    "0", "-1", "1", "255", "256", "65535", "65536", "2147483647", "-2147483648", "4294967295", "4294967296",
    "9223372036854775807", "-9223372036854775808", "18446744073709551615", "1e308", "1e999", "-0", "NaN",
    "0.5", "1e-400", "100000", "1000000000",
};
const uint64_t kInterestingBinary[] = {
    0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
    0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
};

}  // namespace

std::string Mutator::Mutate(const std::string& base, const std::string& other, size_t max_bytes) {
  std::string s = base;
  int edits = 1 + static_cast<int>(Below(8));
  for (int k = 0; k < edits; ++k) MutateOnce(s, other);
  if (s.size() > max_bytes) s.resize(max_bytes);
  // Rarely, nest a part of the input deeply; the result may pass max_bytes
  // (a deep nest is the point).
  if (nestings_ && !nestings_->empty() && Below(64) == 0) {
    const auto& [open, close] = (*nestings_)[Below(nestings_->size())];
    size_t depth = size_t{1} << (4 + Below(14));  // 16 .. 131072
    size_t from = Below(s.size() + 1);
    size_t to = from + Below(s.size() - from + 1);
    std::string nested;
    nested.reserve(s.size() + depth * (open.size() + close.size()));
    nested.append(s, 0, from);
    for (size_t k = 0; k < depth; ++k) nested += open;
    nested.append(s, from, to - from);
    for (size_t k = 0; k < depth; ++k) nested += close;
    nested.append(s, to, std::string::npos);
    s = std::move(nested);
  }
  return s;
}

void Mutator::MutateOnce(std::string& s, const std::string& other) {
  switch (Below(11)) {
    case 0:  // flip a bit
      if (!s.empty()) s[Below(s.size())] ^= static_cast<char>(1u << Below(8));
      return;
    case 1:  // set a byte
      if (!s.empty()) s[Below(s.size())] = static_cast<char>(Below(256));
      return;
    case 2: {  // erase a run
      if (s.empty()) return;
      size_t at = Below(s.size());
      s.erase(at, 1 + Below(std::min<size_t>(64, s.size() - at)));
      return;
    }
    case 3: {  // duplicate a run (repetition, nesting)
      if (s.empty()) return;
      size_t at = Below(s.size());
      size_t n = 1 + Below(std::min<size_t>(256, s.size() - at));
      std::string run = s.substr(at, n);
      int times = 1 + static_cast<int>(Below(Below(2) ? 2 : 64));
      std::string rep;
      for (int t = 0; t < times; ++t) rep += run;
      s.insert(Below(s.size() + 1), rep);
      return;
    }
    case 4: {  // insert random bytes
      size_t n = 1 + Below(8);
      std::string bytes;
      for (size_t k = 0; k < n; ++k) bytes += static_cast<char>(Below(256));
      s.insert(Below(s.size() + 1), bytes);
      return;
    }
    case 5:
    case 6: {  // a dictionary token, inserted or overwriting
      if (!dictionary_ || dictionary_->empty()) return;
      const std::string& tok = (*dictionary_)[Below(dictionary_->size())];
      size_t at = Below(s.size() + 1);
      if (Below(2) && at + tok.size() <= s.size()) s.replace(at, tok.size(), tok);
      else s.insert(at, tok);
      return;
    }
    case 7: {  // an interesting number as text, replacing a digit run
      std::string num = kInterestingText[Below(sizeof(kInterestingText) / sizeof(kInterestingText[0]))];
      size_t at = Below(s.size() + 1);
      size_t end = at;
      while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.' || s[end] == '-')) ++end;
      s.replace(at, end - at, num);
      return;
    }
    case 8: {  // an interesting binary integer (sizes, counts, offsets)
      if (s.empty()) return;
      uint64_t v = kInterestingBinary[Below(sizeof(kInterestingBinary) / sizeof(kInterestingBinary[0]))];
      size_t width = size_t{1} << Below(4);  // 1, 2, 4 or 8 bytes, little-endian
      size_t at = Below(s.size());
      for (size_t k = 0; k < width && at + k < s.size(); ++k) s[at + k] = static_cast<char>(v >> (8 * k));
      return;
    }
    case 9: {  // splice with another input
      if (other.empty()) return;
      size_t from = Below(other.size());
      size_t n = 1 + Below(std::min<size_t>(1024, other.size() - from));
      s.insert(Below(s.size() + 1), other.substr(from, n));
      return;
    }
    default: {  // truncate
      if (!s.empty()) s.resize(Below(s.size()));
      return;
    }
  }
}

}  // namespace lineage::fuzz
