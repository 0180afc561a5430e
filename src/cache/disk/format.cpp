#include "cache/disk/format.h"

#include <xxhash.h>

namespace lineage::cache::disk {

uint64_t Checksum(const uint8_t* data, size_t n) { return XXH3_64bits(data, n); }

std::string Key128::Hex() const {
  static const char* kDigits = "0123456789abcdef";
  std::string s(32, '0');
  for (size_t i = 0; i < 16; ++i) {
    s[2 * i] = kDigits[bytes[i] >> 4];
    s[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return s;
}

bool Key128::FromHex(const std::string& hex, Key128* out) {
  if (hex.size() != 32) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < 16; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

}  // namespace lineage::cache::disk
