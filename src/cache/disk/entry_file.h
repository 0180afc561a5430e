// Entry files (`.ent`): one cache entry — its tokens, the keys of its KV pages
// and the keys of its recurrent states (entry end and checkpoints) — in two
// checksummed sections (docs/disk-format.md, "Entry file"):
//   A  80-byte header: magic, version, flags, fingerprint, file id, sizes
//   B  tokens, page keys, state directory, XXH3-64 of section B
// The page and state bytes live in blob files (blob_file.h), so an entry file
// is small and a restore reads only the blobs its restore point needs.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_types.h"
#include "core/file_env.h"
#include "cache/disk/format.h"
#include "core/status.h"

namespace lineage::cache::disk {

struct StateRef {
  int64_t n = 0;                       // the state follows tokens [0, n)
  PointKind kind = PointKind::kEntryEnd;
  Key128 key;
};

struct EntryMeta {
  uint64_t file_id = 0;                // the file's name; unique across runs
  Key128 fingerprint;
  bool anchor = false;
  int64_t page_tokens = 0;
  int64_t created_ms = 0;
  Tokens tokens;
  std::vector<Key128> pages;           // ceil(tokens / page_tokens) keys
  std::vector<StateRef> states;        // ascending n; the last is at tokens.size()
};

std::vector<uint8_t> EncodeEntry(const EntryMeta& meta);

// Section A alone: what the header declares, checked (magic, version,
// checksum, consistent counts), and the file size it implies.
struct EntryHeader {
  uint64_t num_tokens = 0;
  uint64_t page_tokens = 0;
  uint64_t num_pages = 0;
  uint64_t num_states = 0;
  uint64_t file_bytes = 0;  // header + body
};
Result<EntryHeader> DecodeEntryHeader(std::span<const uint8_t> bytes, const std::string& what);

// Checks magic, version, both checksums and every size. kUnsupported for
// another format version, kCorrupt for anything damaged. The fingerprint is
// returned, not judged: the caller decides what is foreign.
Result<EntryMeta> DecodeEntry(std::span<const uint8_t> bytes, const std::string& what);
// Reads the 80-byte header, compares the size it implies with the file's,
// and only then reads the body: a file that lies about its size (a huge or
// sparse one) is rejected without being read.
Result<EntryMeta> ReadEntryFile(FileEnv* env, const std::string& path);

uint32_t StoredKindOf(PointKind kind);
bool PointKindOf(uint32_t stored, PointKind* kind);

}  // namespace lineage::cache::disk
