// Internals shared by the ToolMatcher sources (tool_matcher.cpp: the
// top-level sequence, literals, raw text and XML parameters;
// tool_matcher_json.cpp: JSON values): byte classes, the UTF-8 state a text
// frame keeps, raw-text words and frame phases. Not part of any interface.
#pragma once

#include <cstdint>
#include <string_view>

#include "server/tools/tool_grammar.h"

namespace lineage::server::matcher_internal {

inline bool IsWs(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
inline bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
inline bool IsHex(uint8_t c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// UTF-8 state packed in a frame's `used`: bytes still expected (bits 0-7)
// and the range of the next one (bits 8-15, 16-23), per RFC 3629's table.
inline uint64_t Utf8State(int need, uint8_t lo, uint8_t hi) { return uint64_t(need) | uint64_t(lo) << 8 | uint64_t(hi) << 16; }
inline int Utf8Need(uint64_t s) { return static_cast<int>(s & 0xFF); }
// Length of the sequence `lead` starts (1 for ASCII, 0 if it cannot start
// one); *state is what the next byte must be.
inline int Utf8Lead(uint8_t lead, uint64_t* state) {
  if (lead < 0x80) return *state = 0, 1;
  if (lead >= 0xC2 && lead <= 0xDF) return *state = Utf8State(1, 0x80, 0xBF), 2;
  if (lead == 0xE0) return *state = Utf8State(2, 0xA0, 0xBF), 3;
  if (lead == 0xED) return *state = Utf8State(2, 0x80, 0x9F), 3;
  if (lead >= 0xE1 && lead <= 0xEF) return *state = Utf8State(2, 0x80, 0xBF), 3;
  if (lead == 0xF0) return *state = Utf8State(3, 0x90, 0xBF), 4;
  if (lead >= 0xF1 && lead <= 0xF3) return *state = Utf8State(3, 0x80, 0xBF), 4;
  if (lead == 0xF4) return *state = Utf8State(3, 0x80, 0x8F), 4;
  return 0;
}
// Takes a continuation byte; false when it is not the one expected.
inline bool Utf8Continue(uint8_t c, uint64_t* state) {
  uint8_t lo = (*state >> 8) & 0xFF, hi = (*state >> 16) & 0xFF;
  if (c < lo || c > hi) return false;
  int need = Utf8Need(*state) - 1;
  *state = need == 0 ? 0 : Utf8State(need, 0x80, 0xBF);
  return true;
}

// Raw text words: index 0 ends the text, index 1 (if any) may not appear.
struct RawWords {
  std::string_view words[2];
  int count;
};
inline RawWords WordsFor(uint8_t terminator) {
  if (terminator == 0) return {{ToolGrammar::kThinkEnd, {}}, 1};
  return {{ToolGrammar::kParamEnd, ToolGrammar::kCallEnd}, 2};
}
inline constexpr uint8_t kThinkText = 0, kParamText = 1;

// Object phases.
enum : uint8_t { kObjFirst, kObjKey, kObjAfterKey, kObjAfterColon, kObjValue, kObjAfterValue, kObjAfterComma };
// Array phases.
enum : uint8_t { kArrFirst, kArrValue, kArrAfterValue, kArrAfterComma };
// XML parameter list phases.
enum : uint8_t { kXmlGap, kXmlNext, kXmlKey, kXmlText, kXmlJsonGap, kXmlJson, kXmlAfterJson };
// Top-level phases.
enum : uint8_t { kTopBefore, kTopChild, kTopDone = 3 };

inline uint64_t AllProperties(const SchemaNode& n) {
  size_t k = n.properties.size();
  return k >= 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
}
// Whether a key not yet used may still come: always past 64 properties,
// whose use is not tracked (tool_grammar.cpp).
inline bool MoreKeys(const SchemaNode& n, uint64_t used) {
  return n.any_keys || n.properties.size() > 64 || (AllProperties(n) & ~used) != 0;
}
// The bit of property i in a "used" mask; 0 past the tracked 64.
inline uint64_t PropertyBit(int32_t i) { return i < 64 ? uint64_t{1} << i : 0; }

// One byte of text in a frame that counts its bytes in `a` against the
// limit `b` and keeps its UTF-8 state in `used`. A character is taken only
// whole within the limit, so the limit never falls inside one.
inline bool TextByte(auto& f, uint8_t c) {
  if (Utf8Need(f.used) > 0) {
    if (!Utf8Continue(c, &f.used)) return false;
  } else {
    uint64_t state = 0;
    int n = Utf8Lead(c, &state);
    if (n == 0 || f.a + n > f.b) return false;
    f.used = state;
  }
  ++f.a;
  return true;
}

}  // namespace lineage::server::matcher_internal

// A child that finished without consuming the byte pops with kPopRefeed; one
// that finished on it pops here and reports kConsumed.
#define LINEAGE_POP_CONSUMED(result) \
  do {                               \
    int32_t r_ = (result);           \
    --depth_;                        \
    Return(r_);                      \
    return Step::kConsumed;          \
  } while (0)
