// Base64 (RFC 4648, standard alphabet, '=' padding): the token bytes of a
// tiktoken.model file. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lineage::text {

std::string Base64Encode(std::string_view bytes);
// The bytes, or nullopt for a character outside the alphabet, a length that
// is not a multiple of 4 or padding anywhere but at the end.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace lineage::text
