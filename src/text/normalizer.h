// Unicode NFC normalization (utf8proc) for tokenizers that ask for it.
// Invalid UTF-8 is kept byte for byte: only the valid runs around it are
// normalized. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace lineage::text {

// True when `s` is certainly in NFC already (a fast scan for characters
// that can never change under NFC); false means "maybe not".
bool IsTriviallyNfc(std::string_view s);

std::string ToNfc(std::string_view s);

}  // namespace lineage::text
