// Python str operations on UTF-8 strings, counted in code points.
//
// Whitespace is Python's str.isspace() set; case mapping uses utf8proc's
// simple mappings (Python's special casings such as "ß".upper() == "SS" are
// not modelled). Invalid UTF-8 bytes count as one code point each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lineage::jinja {

bool IsPySpace(int32_t cp);
void AppendUtf8(int32_t cp, std::string& out);
// Decodes one code point at s[i]; returns its byte length (>= 1).
size_t DecodeAt(std::string_view s, size_t i, int32_t* cp);
std::vector<int32_t> ToCodepoints(std::string_view s);
std::string FromCodepoints(const std::vector<int32_t>& cps);
size_t CodepointCount(std::string_view s);
bool IsAscii(std::string_view s);

std::string_view PyStrip(std::string_view s, bool left, bool right);
std::string_view PyRstrip(std::string_view s);
std::string PyStripChars(std::string_view s, std::string_view chars, bool left, bool right);
std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
std::vector<std::string> PyRsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
// nullopt when the result would exceed max_bytes.
std::optional<std::string> PyReplace(std::string_view s, std::string_view old_text, std::string_view new_text,
                                     int64_t count, size_t max_bytes);
std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);
std::string PyTitle(std::string_view s);
std::string PyCapitalize(std::string_view s);
// Code-point index of the first occurrence of needle at or after start, or -1.
int64_t PyFind(std::string_view s, std::string_view needle);
int64_t PyRfind(std::string_view s, std::string_view needle);
int64_t PyCount(std::string_view s, std::string_view needle);

// Decodes the escapes of a Python string literal body (\n, \x41, \u00e9, ...).
std::string DecodePythonEscapes(std::string_view body);
// markupsafe.escape: & < > ' " become entities.
std::string HtmlEscape(std::string_view s);

}  // namespace lineage::jinja
