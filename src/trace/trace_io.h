// Reading and writing traces (docs/traces.md): the native JSONL format and the
// Mooncake format, both into the one Trace form of trace.h.
//
// Errors are values: a malformed line yields InvalidArgument naming the file
// and line; a native trailer whose checksum or count disagrees yields Corrupt.
#pragma once

#include <string>

#include "core/file_env.h"
#include "core/status.h"
#include "trace/trace.h"

namespace lineage::trace {

// Reads either format; the first line decides (a native header has "format").
Result<Trace> ReadTrace(const std::string& path);
Result<Trace> ParseTrace(const std::string& text, const std::string& name);

// Native JSONL with header and checksummed trailer.
std::string FormatNative(const Trace& trace);
// Mooncake JSONL: prompts cut into 512-token prefix-chained blocks.
std::string FormatMooncake(const Trace& trace);


// The most a trace file may hold (a 49M-token mixed trace is a few MB), and
// the most tokens one request may carry: it is expanded to a token list when
// replayed, and no model has a context near it.
inline constexpr uint64_t kMaxTraceFileBytes = uint64_t{256} << 20;
inline constexpr int64_t kMaxRequestTokens = int64_t{1} << 24;

inline constexpr int kNativeVersion = 1;
inline constexpr const char* kNativeMagic = "lineage-trace";
inline constexpr int64_t kMooncakeBlockTokens = 512;

}  // namespace lineage::trace
