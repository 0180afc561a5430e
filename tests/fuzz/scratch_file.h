// ScratchFile: a file the file-based targets (GGUF, safetensors) write each
// input to, because their parsers map a path. One per process, in /dev/shm
// when it exists (no disk I/O per run), removed at exit. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lineage::fuzz {

// Writes the bytes to this process's scratch file for `suffix` and returns
// its path; empty when the file cannot be written.
std::string WriteScratchFile(const std::string& suffix, const uint8_t* data, size_t size);

}  // namespace lineage::fuzz
