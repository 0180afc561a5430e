// The GPT-2 byte-level map: every byte 0..255 gets a printable code point
// (bytes that are printable Latin-1 keep their value; the others take
// U+0100.. in byte order), so any byte string becomes a string of visible
// characters and a BPE vocabulary can be stored as text (' ' -> "Ġ",
// '\n' -> "Ċ"). Immutable tables; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lineage::text {

// Code point that stands for `byte`.
char32_t ByteToCodepoint(uint8_t byte);
// The byte a code point stands for, or -1 when it is not in the map.
int CodepointToByte(char32_t cp);

// UTF-8 text of the map's character for `byte` (1 or 2 bytes).
const std::string& ByteToken(uint8_t byte);

// Maps raw bytes to their byte-level text.
std::string ByteLevelEncode(std::string_view bytes);
// Maps byte-level text back to raw bytes. Characters outside the map (and
// invalid UTF-8) are copied through unchanged; returns false if any were.
bool ByteLevelDecode(std::string_view text, std::string* bytes);

// The 256 bytes in GPT-2 vocabulary order: printable bytes ascending first,
// then the rest. Real vocabularies give the byte tokens ids in this order.
const uint8_t* ByteTokenOrder();

}  // namespace lineage::text
