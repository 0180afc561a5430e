// Blob files: one KV page (`.kvp`) or one recurrent state (`.rst`), named by
// its content key (docs/disk-format.md, "Blob files"):
//   64-byte header | payload | XXH3-64 of everything before it
// A blob is written once and shared by every entry that lists its key.
//
// Thread-safety: pure functions over the FileEnv, which is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/file_env.h"
#include "cache/disk/format.h"
#include "core/status.h"

namespace lineage::cache::disk {

enum class BlobKind : uint8_t { kPage, kState };

struct BlobHeader {
  BlobKind kind = BlobKind::kPage;
  Key128 fingerprint;
  Key128 key;
  uint64_t tokens = 0;         // rows of a page; the length n of a state
  uint64_t payload_bytes = 0;
};

inline uint64_t BlobFileBytes(uint64_t payload_bytes) { return kBlobHeaderBytes + payload_bytes + kChecksumBytes; }

// Writes header, payload and checksum through env.WriteAtomic.
Status WriteBlobFile(FileEnv* env, const std::string& tmp_path, const std::string& path, const BlobHeader& h,
                     std::span<const uint8_t> payload);

// Reads and verifies a whole blob file: magic, version, sizes, checksum, and
// that it is `kind` under `fingerprint` with `key`. The 64-byte header is read
// and checked first (its sizes against the file's, its model and key), so a
// file that lies about its size or is not this blob costs 64 bytes. `file` receives the
// whole file (BlobPayload finds the payload in it, without a copy).
// kCorrupt on any mismatch (kNotFound if the file is missing).
Result<BlobHeader> ReadBlobFile(FileEnv* env, const std::string& path, BlobKind kind, const Key128& fingerprint,
                                const Key128& key, std::vector<uint8_t>* file);
inline std::span<const uint8_t> BlobPayload(const std::vector<uint8_t>& file, const BlobHeader& h) {
  return {file.data() + kBlobHeaderBytes, static_cast<size_t>(h.payload_bytes)};
}

// Verifies magic, version, sizes and checksum only (for `lineage cache verify`),
// reading the payload in 1 MiB chunks.
Result<BlobHeader> VerifyBlobFile(FileEnv* env, const std::string& path, BlobKind kind);

}  // namespace lineage::cache::disk
