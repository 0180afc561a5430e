// UTF-8 helpers for the tokenizer: decoding one code point with validation,
// encoding, and finding where an incomplete character starts at the end of a
// byte string. Stateless and thread-safe. Validation follows RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lineage::text {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the code point starting at s[0]. On success returns its length in
// bytes (1..4) and sets *cp. Returns 0 when s[0] does not start a valid,
// complete sequence (invalid lead, bad continuation, overlong, surrogate,
// out of range, or truncated by the end of `s`).
size_t DecodeUtf8(std::string_view s, char32_t* cp);

// Appends the UTF-8 encoding of `cp` (which must be <= U+10FFFF).
void AppendUtf8(char32_t cp, std::string* out);
std::string EncodeUtf8(char32_t cp);

// Length in bytes of a maximal valid prefix of `s`.
size_t ValidUtf8Prefix(std::string_view s);
inline bool IsValidUtf8(std::string_view s) { return ValidUtf8Prefix(s) == s.size(); }

// Number of bytes at the end of `s` that form the beginning of a valid
// multi-byte character still missing its last bytes (0..3). Such bytes may
// become valid when more bytes arrive; everything before them is final.
size_t IncompleteUtf8Suffix(std::string_view s);

// Replaces every invalid byte sequence by U+FFFD (one per maximal invalid
// subpart, as the Unicode standard recommends).
std::string SanitizeUtf8(std::string_view s);

}  // namespace lineage::text
