// Parsing client JSON with a nesting limit enforced while parsing, in time
// linear in the input.
//
// Every JSON text that comes from a client (request bodies, tool-call
// arguments sent as strings) or from the model goes through here, never
// through json::parse directly, for two reasons:
// - Depth. Copying, dumping and every walk over a DOM recurse once per
//   level, so a DOM 100,000 levels deep overflows the stack wherever it is
//   used next. The limit is checked as each object or array opens, before
//   the DOM exists; nothing deeper than kMaxJsonDepth is ever built, so
//   every later walk is bounded by it. (nlohmann's own parser is iterative,
//   and so is its destructor.)
// - Time. nlohmann's DOM builder inserts keys one at a time into an
//   ordered_json object, a vector of pair<const string, json>; the pair's
//   move may throw, so each reallocation copies the values already inserted,
//   whole subtrees included. Objects nested with a trailing key therefore
//   parse in time quadratic in the depth (96 KB: 90 s). Here an object's
//   members are gathered first and the object is built once, at its size.
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace lineage::server {

// Deep enough for any real schema or message; shallow enough that every
// recursive walk over a parsed value stays far from the end of a thread's
// stack.
inline constexpr int kMaxJsonDepth = 128;

// kInvalidArgument naming `what` ("request body") on a syntax error or on
// nesting deeper than max_depth. Duplicate keys: the last value wins, at the
// first key's position (as nlohmann's parser does).
Result<nlohmann::ordered_json> ParseJsonBounded(std::string_view text, std::string_view what,
                                                int max_depth = kMaxJsonDepth);

}  // namespace lineage::server
