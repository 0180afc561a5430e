#include "cache/disk/blob_file.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace lineage::cache::disk {
namespace {

const char* MagicOf(BlobKind kind) { return kind == BlobKind::kPage ? kPageMagic : kStateMagic; }

// Reads and checks the 64-byte header alone: magic, version, and that the
// sizes it declares add up to the file's size, so nothing more is read from a
// file that lies about its size.
Result<BlobHeader> ReadHeader(FileEnv* env, const std::string& path, BlobKind kind, uint8_t* head,
                              uint64_t* file_bytes) {
  Result<uint64_t> size = env->FileSize(path);
  if (!size.ok()) return size.status();
  if (*size < kBlobHeaderBytes + kChecksumBytes) return Corrupt(path + ": too short for a blob file");
  LINEAGE_RETURN_IF_ERROR(env->ReadAt(path, 0, kBlobHeaderBytes, head));
  if (std::memcmp(head + blob::kMagic, MagicOf(kind), 8) != 0) return Corrupt(path + ": bad magic");
  if (GetU32(head + blob::kVersion) != kFormatVersion) {
    return Unsupported(path + ": format version " + std::to_string(GetU32(head + blob::kVersion)));
  }
  BlobHeader h;
  h.kind = kind;
  std::memcpy(h.fingerprint.bytes.data(), head + blob::kFingerprint, 16);
  std::memcpy(h.key.bytes.data(), head + blob::kKey, 16);
  h.tokens = GetU64(head + blob::kTokens);
  h.payload_bytes = GetU64(head + blob::kPayloadBytes);
  if (GetU32(head + blob::kHeaderBytes) != kBlobHeaderBytes || h.payload_bytes > *size ||
      BlobFileBytes(h.payload_bytes) != *size) {
    return Corrupt(path + ": sizes in the header disagree with the file's " + std::to_string(*size) + " bytes");
  }
  *file_bytes = *size;
  return h;
}

// Reads the rest of a file whose header is in `bytes` and checks its checksum.
Status ReadBodyAndCheck(FileEnv* env, const std::string& path, uint64_t file_bytes, std::vector<uint8_t>* bytes) {
  bytes->resize(file_bytes);
  LINEAGE_RETURN_IF_ERROR(
      env->ReadAt(path, kBlobHeaderBytes, file_bytes - kBlobHeaderBytes, bytes->data() + kBlobHeaderBytes));
  const uint64_t sum_at = file_bytes - kChecksumBytes;
  if (Checksum(bytes->data(), sum_at) != GetU64(bytes->data() + sum_at)) return Corrupt(path + ": checksum mismatch");
  return Status::Ok();
}

}  // namespace

Status WriteBlobFile(FileEnv* env, const std::string& tmp_path, const std::string& path, const BlobHeader& h,
                     std::span<const uint8_t> payload) {
  uint8_t head[kBlobHeaderBytes] = {};
  std::memcpy(head + blob::kMagic, MagicOf(h.kind), 8);
  PutU32(head + blob::kVersion, kFormatVersion);
  PutU32(head + blob::kHeaderBytes, kBlobHeaderBytes);
  std::memcpy(head + blob::kFingerprint, h.fingerprint.bytes.data(), 16);
  std::memcpy(head + blob::kKey, h.key.bytes.data(), 16);
  PutU64(head + blob::kTokens, h.tokens);
  PutU64(head + blob::kPayloadBytes, payload.size());
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, head, sizeof(head));
  XXH3_64bits_update(&st, payload.data(), payload.size());
  uint8_t sum[kChecksumBytes];
  PutU64(sum, XXH3_64bits_digest(&st));
  const std::span<const uint8_t> parts[] = {{head, sizeof(head)}, payload, {sum, sizeof(sum)}};
  return env->WriteAtomic(tmp_path, path, parts);
}

Result<BlobHeader> ReadBlobFile(FileEnv* env, const std::string& path, BlobKind kind, const Key128& fingerprint,
                                const Key128& key, std::vector<uint8_t>* file) {
  file->resize(kBlobHeaderBytes);
  uint64_t file_bytes = 0;
  Result<BlobHeader> h = ReadHeader(env, path, kind, file->data(), &file_bytes);
  if (!h.ok()) return h;
  if (!(h->fingerprint == fingerprint)) return Corrupt(path + ": belongs to another model");
  if (!(h->key == key)) return Corrupt(path + ": holds key " + h->key.Hex() + ", not its name's");
  LINEAGE_RETURN_IF_ERROR(ReadBodyAndCheck(env, path, file_bytes, file));
  return h;
}

Result<BlobHeader> VerifyBlobFile(FileEnv* env, const std::string& path, BlobKind kind) {
  uint8_t head[kBlobHeaderBytes];
  uint64_t file_bytes = 0;
  Result<BlobHeader> h = ReadHeader(env, path, kind, head, &file_bytes);
  if (!h.ok()) return h;
  // Streamed in chunks: verifying a large file costs its reads, not its size in RAM.
  constexpr uint64_t kChunkBytes = uint64_t{1} << 20;
  std::vector<uint8_t> chunk(static_cast<size_t>(std::min(kChunkBytes, file_bytes)));
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, head, kBlobHeaderBytes);
  const uint64_t sum_at = file_bytes - kChecksumBytes;
  for (uint64_t at = kBlobHeaderBytes; at < sum_at;) {
    const uint64_t n = std::min(kChunkBytes, sum_at - at);
    LINEAGE_RETURN_IF_ERROR(env->ReadAt(path, at, n, chunk.data()));
    XXH3_64bits_update(&st, chunk.data(), n);
    at += n;
  }
  uint8_t sum[kChecksumBytes];
  LINEAGE_RETURN_IF_ERROR(env->ReadAt(path, sum_at, kChecksumBytes, sum));
  if (XXH3_64bits_digest(&st) != GetU64(sum)) return Corrupt(path + ": checksum mismatch");
  return h;
}

}  // namespace lineage::cache::disk
