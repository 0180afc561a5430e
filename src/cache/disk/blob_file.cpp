#include "cache/disk/blob_file.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <cstring>

namespace lineage::cache::disk {
namespace {

const char* MagicOf(BlobKind kind) { return kind == BlobKind::kPage ? kPageMagic : kStateMagic; }

Result<BlobHeader> ReadAndCheck(FileEnv* env, const std::string& path, BlobKind kind, std::vector<uint8_t>* bytes) {
  Result<uint64_t> size = env->FileSize(path);
  if (!size.ok()) return size.status();
  if (*size < kBlobHeaderBytes + kChecksumBytes) return Corrupt(path + ": too short for a blob file");
  bytes->resize(*size);
  if (Status st = env->ReadAt(path, 0, *size, bytes->data()); !st.ok()) return st;
  const uint8_t* b = bytes->data();
  if (std::memcmp(b + blob::kMagic, MagicOf(kind), 8) != 0) return Corrupt(path + ": bad magic");
  if (GetU32(b + blob::kVersion) != kFormatVersion) {
    return Unsupported(path + ": format version " + std::to_string(GetU32(b + blob::kVersion)));
  }
  BlobHeader h;
  h.kind = kind;
  std::memcpy(h.fingerprint.bytes.data(), b + blob::kFingerprint, 16);
  std::memcpy(h.key.bytes.data(), b + blob::kKey, 16);
  h.tokens = GetU64(b + blob::kTokens);
  h.payload_bytes = GetU64(b + blob::kPayloadBytes);
  if (GetU32(b + blob::kHeaderBytes) != kBlobHeaderBytes || BlobFileBytes(h.payload_bytes) != *size) {
    return Corrupt(path + ": sizes in the header disagree with the file's " + std::to_string(*size) + " bytes");
  }
  const uint64_t sum_at = *size - kChecksumBytes;
  if (Checksum(b, sum_at) != GetU64(b + sum_at)) return Corrupt(path + ": checksum mismatch");
  return h;
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
  Result<BlobHeader> h = ReadAndCheck(env, path, kind, file);
  if (!h.ok()) return h;
  if (!(h->fingerprint == fingerprint)) return Corrupt(path + ": belongs to another model");
  if (!(h->key == key)) return Corrupt(path + ": holds key " + h->key.Hex() + ", not its name's");
  return h;
}

Result<BlobHeader> VerifyBlobFile(FileEnv* env, const std::string& path, BlobKind kind) {
  std::vector<uint8_t> bytes;
  return ReadAndCheck(env, path, kind, &bytes);
}

}  // namespace lineage::cache::disk
