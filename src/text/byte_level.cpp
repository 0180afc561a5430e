#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace lineage::text {
namespace {

bool Printable(int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

struct Tables {
  std::array<char32_t, 256> to_cp{};
  std::array<std::string, 256> to_text;
  std::array<uint8_t, 256> order{};
  std::array<int16_t, 324> from_cp{};  // code points used are < 0x144

  Tables() {
    from_cp.fill(-1);
    int next = 0;
    int n_order = 0;
    for (int b = 0; b < 256; ++b) {
      if (Printable(b)) order[n_order++] = static_cast<uint8_t>(b);
    }
    for (int b = 0; b < 256; ++b) {
      if (!Printable(b)) order[n_order++] = static_cast<uint8_t>(b);
      to_cp[b] = Printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + next++);
      from_cp[to_cp[b]] = static_cast<int16_t>(b);
      to_text[b] = EncodeUtf8(to_cp[b]);
    }
  }
};

const Tables& T() {
  static const Tables t;
  return t;
}

}  // namespace

char32_t ByteToCodepoint(uint8_t byte) { return T().to_cp[byte]; }

int CodepointToByte(char32_t cp) { return cp < T().from_cp.size() ? T().from_cp[cp] : -1; }

const std::string& ByteToken(uint8_t byte) { return T().to_text[byte]; }

const uint8_t* ByteTokenOrder() { return T().order.data(); }

std::string ByteLevelEncode(std::string_view bytes) {
  const Tables& t = T();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += t.to_text[static_cast<uint8_t>(c)];
  return out;
}

bool ByteLevelDecode(std::string_view text, std::string* bytes) {
  bool all_mapped = true;
  size_t i = 0;
  while (i < text.size()) {
    char32_t cp;
    size_t n = DecodeUtf8(text.substr(i), &cp);
    if (n == 0) {
      bytes->push_back(text[i]);
      all_mapped = false;
      ++i;
      continue;
    }
    int b = CodepointToByte(cp);
    if (b < 0) {
      bytes->append(text.data() + i, n);
      all_mapped = false;
    } else {
      bytes->push_back(static_cast<char>(b));
    }
    i += n;
  }
  return all_mapped;
}

}  // namespace lineage::text
