#include "server/replies/utf8_repair.h"

#include <cstdint>

namespace lineage::server {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the sequence a lead byte starts and the valid range of its second
// byte; length 0 for a byte that can never start a sequence.
struct Lead {
  int length;
  uint8_t lo, hi;
};

Lead LeadOf(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  return {0, 0, 0};
}

}  // namespace

std::string Utf8Repair::Feed(std::string_view bytes) {
  std::string in = pending_;
  in.append(bytes);
  pending_.clear();
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    uint8_t b = static_cast<uint8_t>(in[i]);
    Lead lead = LeadOf(b);
    if (lead.length == 1) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    if (lead.length == 0) {
      out.append(kReplacement);
      ++i;
      continue;
    }
    // Count how many bytes after the lead are valid continuations.
    int valid = 1;
    while (valid < lead.length && i + valid < in.size()) {
      uint8_t c = static_cast<uint8_t>(in[i + valid]);
      uint8_t lo = valid == 1 ? lead.lo : 0x80, hi = valid == 1 ? lead.hi : 0xBF;
      if (c < lo || c > hi) break;
      ++valid;
    }
    if (valid == lead.length) {
      out.append(in, i, valid);
    } else if (i + valid == in.size()) {
      pending_ = in.substr(i);  // cut by the piece boundary: wait for more
    } else {
      out.append(kReplacement);  // a maximal subpart ends here
    }
    i += valid;
  }
  return out;
}

std::string Utf8Repair::Finish() {
  if (pending_.empty()) return "";
  pending_.clear();
  return std::string(kReplacement);
}

std::string RepairUtf8(std::string_view bytes) {
  Utf8Repair r;
  std::string out = r.Feed(bytes);
  return out + r.Finish();
}

}  // namespace lineage::server
