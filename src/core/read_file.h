// Reading a whole file into memory with a bound. A path given by mistake (a
// device such as /dev/zero, a FIFO, a huge log) would otherwise take every
// byte of memory before anything looked at it; past `max_bytes` the read
// stops with a clear error instead.
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>

#include "core/file_env.h"
#include "core/status.h"

namespace lineage {

// kNotFound when `path` does not exist, kIoError when it cannot be opened or
// read, kOutOfRange when it holds more than `max_bytes`.
// Reads through `env` (FileEnv::ReadBounded), where fault injection reaches it.
Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes, FileEnv* env = DefaultFileEnv());

}  // namespace lineage
