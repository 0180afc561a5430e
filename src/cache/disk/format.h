// The constants of the disk tier's file format, version 1 (docs/disk-format.md
// is the prose with the grammar and a worked example; this header is the same
// format as numbers). Sizes are derived and pinned with static_assert so that
// the two cannot drift apart silently.
//
// All integers are little-endian; checksums are XXH3-64 with seed 0.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace lineage::cache::disk {

inline constexpr uint32_t kFormatVersion = 1;

// 16 bytes: a model fingerprint, a page key or a state key.
struct Key128 {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Key128&) const = default;
  std::string Hex() const;
  // Parses 32 lowercase hex digits; false on anything else.
  static bool FromHex(const std::string& hex, Key128* out);
};

struct Key128Hash {
  size_t operator()(const Key128& k) const {
    uint64_t v;
    std::memcpy(&v, k.bytes.data(), 8);
    return static_cast<size_t>(v);
  }
};

// Blob files: one KV page (`.kvp`) or one recurrent state (`.rst`).
inline constexpr char kPageMagic[9] = "LNKVPAG1";
inline constexpr char kStateMagic[9] = "LNSTATE1";
inline constexpr uint32_t kBlobHeaderBytes = 64;
namespace blob {
inline constexpr uint32_t kMagic = 0, kVersion = 8, kHeaderBytes = 12, kFingerprint = 16, kKey = 32,
                          kTokens = 48, kPayloadBytes = 56, kPayload = 64;
}  // namespace blob
static_assert(blob::kPayload == kBlobHeaderBytes);
static_assert(blob::kPayloadBytes + 8 == kBlobHeaderBytes);
inline constexpr uint32_t kChecksumBytes = 8;

// Entry files (`.ent`): header (section A) then body (section B).
inline constexpr char kEntryMagic[9] = "LNENTRY1";
inline constexpr uint32_t kEntryHeaderBytes = 80;
namespace entry {
inline constexpr uint32_t kMagic = 0, kVersion = 8, kFlags = 12, kFingerprint = 16, kFileId = 32,
                          kNumTokens = 40, kPageTokens = 48, kNumPages = 52, kNumStates = 56,
                          kReserved = 60, kCreatedMs = 64, kChecksum = 72;
inline constexpr uint32_t kFlagAnchor = 1;
}  // namespace entry
static_assert(entry::kChecksum + kChecksumBytes == kEntryHeaderBytes);
inline constexpr uint32_t kTokenBytes = 4;
inline constexpr uint32_t kKeyBytes = 16;
// A state directory record: u64 length, u32 kind, u32 reserved, 16-byte key.
inline constexpr uint32_t kStateRecordBytes = 8 + 4 + 4 + kKeyBytes;
static_assert(kStateRecordBytes == 32);

// Checkpoint kinds as stored (PointKind has its own numbering in memory).
enum class StoredKind : uint32_t {
  kEntryEnd = 1, kFinal = 2, kGuard = 3, kAnchor = 4, kDivergence = 5, kHistoryEnd = 6, kPeriodic = 7,
};

// Little-endian field access into a byte buffer.
inline void PutU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t GetU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
static_assert(std::endian::native == std::endian::little, "the format is little-endian");

uint64_t Checksum(const uint8_t* data, size_t n);

}  // namespace lineage::cache::disk
