#include "cache/disk/entry_file.h"

#include <cstring>

namespace lineage::cache::disk {
namespace {

constexpr std::pair<PointKind, StoredKind> kKinds[] = {
    {PointKind::kEntryEnd, StoredKind::kEntryEnd},     {PointKind::kFinal, StoredKind::kFinal},
    {PointKind::kGuard, StoredKind::kGuard},           {PointKind::kAnchor, StoredKind::kAnchor},
    {PointKind::kDivergence, StoredKind::kDivergence}, {PointKind::kHistoryEnd, StoredKind::kHistoryEnd},
    {PointKind::kPeriodic, StoredKind::kPeriodic},
};

uint64_t BodyBytes(uint64_t num_tokens, uint64_t num_pages, uint64_t num_states) {
  return num_tokens * kTokenBytes + num_pages * kKeyBytes + num_states * kStateRecordBytes + kChecksumBytes;
}

Status SizeMismatch(const std::string& what, uint64_t file_bytes, uint64_t implied_bytes) {
  return Corrupt(what + ": " + std::to_string(file_bytes) + " bytes, the header implies " +
                 std::to_string(implied_bytes));
}

}  // namespace

uint32_t StoredKindOf(PointKind kind) {
  for (auto [p, s] : kKinds) {
    if (p == kind) return static_cast<uint32_t>(s);
  }
  return static_cast<uint32_t>(StoredKind::kFinal);  // kPrefix is never stored
}

bool PointKindOf(uint32_t stored, PointKind* kind) {
  for (auto [p, s] : kKinds) {
    if (static_cast<uint32_t>(s) == stored) {
      *kind = p;
      return true;
    }
  }
  return false;
}

std::vector<uint8_t> EncodeEntry(const EntryMeta& m) {
  const uint64_t body = BodyBytes(m.tokens.size(), m.pages.size(), m.states.size());
  std::vector<uint8_t> out(kEntryHeaderBytes + body, 0);
  uint8_t* h = out.data();
  std::memcpy(h + entry::kMagic, kEntryMagic, 8);
  PutU32(h + entry::kVersion, kFormatVersion);
  PutU32(h + entry::kFlags, m.anchor ? entry::kFlagAnchor : 0);
  std::memcpy(h + entry::kFingerprint, m.fingerprint.bytes.data(), 16);
  PutU64(h + entry::kFileId, m.file_id);
  PutU64(h + entry::kNumTokens, m.tokens.size());
  PutU32(h + entry::kPageTokens, static_cast<uint32_t>(m.page_tokens));
  PutU32(h + entry::kNumPages, static_cast<uint32_t>(m.pages.size()));
  PutU32(h + entry::kNumStates, static_cast<uint32_t>(m.states.size()));
  PutU64(h + entry::kCreatedMs, static_cast<uint64_t>(m.created_ms));
  PutU64(h + entry::kChecksum, Checksum(h, entry::kChecksum));

  uint8_t* b = h + kEntryHeaderBytes;
  uint8_t* p = b;
  std::memcpy(p, m.tokens.data(), m.tokens.size() * kTokenBytes);
  p += m.tokens.size() * kTokenBytes;
  for (const Key128& k : m.pages) {
    std::memcpy(p, k.bytes.data(), kKeyBytes);
    p += kKeyBytes;
  }
  for (const StateRef& s : m.states) {
    PutU64(p, static_cast<uint64_t>(s.n));
    PutU32(p + 8, StoredKindOf(s.kind));
    std::memcpy(p + 16, s.key.bytes.data(), kKeyBytes);
    p += kStateRecordBytes;
  }
  PutU64(p, Checksum(b, static_cast<size_t>(p - b)));
  return out;
}

Result<EntryHeader> DecodeEntryHeader(std::span<const uint8_t> bytes, const std::string& what) {
  if (bytes.size() < kEntryHeaderBytes) return Corrupt(what + ": too short for an entry header");
  const uint8_t* h = bytes.data();
  if (std::memcmp(h + entry::kMagic, kEntryMagic, 8) != 0) return Corrupt(what + ": bad magic");
  if (GetU32(h + entry::kVersion) != kFormatVersion) {
    return Unsupported(what + ": format version " + std::to_string(GetU32(h + entry::kVersion)));
  }
  if (Checksum(h, entry::kChecksum) != GetU64(h + entry::kChecksum)) return Corrupt(what + ": header checksum mismatch");
  EntryHeader out;
  out.num_tokens = GetU64(h + entry::kNumTokens);
  out.page_tokens = GetU32(h + entry::kPageTokens);
  out.num_pages = GetU32(h + entry::kNumPages);
  out.num_states = GetU32(h + entry::kNumStates);
  if (out.page_tokens == 0 || out.num_tokens == 0 || out.num_tokens > (uint64_t{1} << 40) ||
      out.num_pages != (out.num_tokens + out.page_tokens - 1) / out.page_tokens || out.num_states > out.num_tokens) {
    return Corrupt(what + ": inconsistent sizes in the header");
  }
  out.file_bytes = kEntryHeaderBytes + BodyBytes(out.num_tokens, out.num_pages, out.num_states);
  return out;
}

Result<EntryMeta> DecodeEntry(std::span<const uint8_t> bytes, const std::string& what) {
  Result<EntryHeader> header = DecodeEntryHeader(bytes, what);
  if (!header.ok()) return header.status();
  const uint64_t num_tokens = header->num_tokens, num_pages = header->num_pages, num_states = header->num_states;
  if (bytes.size() != header->file_bytes) return SizeMismatch(what, bytes.size(), header->file_bytes);
  const uint8_t* h = bytes.data();
  EntryMeta m;
  m.anchor = (GetU32(h + entry::kFlags) & entry::kFlagAnchor) != 0;
  std::memcpy(m.fingerprint.bytes.data(), h + entry::kFingerprint, 16);
  m.file_id = GetU64(h + entry::kFileId);
  m.page_tokens = static_cast<int64_t>(header->page_tokens);
  m.created_ms = static_cast<int64_t>(GetU64(h + entry::kCreatedMs));
  const uint8_t* b = h + kEntryHeaderBytes;
  const size_t body = bytes.size() - kEntryHeaderBytes - kChecksumBytes;
  if (Checksum(b, body) != GetU64(b + body)) return Corrupt(what + ": body checksum mismatch");
  const uint8_t* p = b;
  m.tokens.resize(num_tokens);
  std::memcpy(m.tokens.data(), p, num_tokens * kTokenBytes);
  p += num_tokens * kTokenBytes;
  m.pages.resize(num_pages);
  for (Key128& k : m.pages) {
    std::memcpy(k.bytes.data(), p, kKeyBytes);
    p += kKeyBytes;
  }
  m.states.resize(num_states);
  int64_t prev = 0;
  for (StateRef& s : m.states) {
    s.n = static_cast<int64_t>(GetU64(p));
    if (!PointKindOf(GetU32(p + 8), &s.kind) || s.n <= prev || s.n > static_cast<int64_t>(num_tokens)) {
      return Corrupt(what + ": bad state record");
    }
    prev = s.n;
    std::memcpy(s.key.bytes.data(), p + 16, kKeyBytes);
    p += kStateRecordBytes;
  }
  return m;
}

Result<EntryMeta> ReadEntryFile(FileEnv* env, const std::string& path) {
  Result<uint64_t> size = env->FileSize(path);
  if (!size.ok()) return size.status();
  if (*size < kEntryHeaderBytes) return Corrupt(path + ": too short for an entry header");
  // The header first: the body is read only when the size it declares is the
  // file's, so a huge or sparse file costs 80 bytes, not its size.
  std::vector<uint8_t> bytes(kEntryHeaderBytes);
  LINEAGE_RETURN_IF_ERROR(env->ReadAt(path, 0, kEntryHeaderBytes, bytes.data()));
  Result<EntryHeader> header = DecodeEntryHeader(bytes, path);
  if (!header.ok()) return header.status();
  if (header->file_bytes != *size) return SizeMismatch(path, *size, header->file_bytes);
  bytes.resize(*size);
  LINEAGE_RETURN_IF_ERROR(
      env->ReadAt(path, kEntryHeaderBytes, *size - kEntryHeaderBytes, bytes.data() + kEntryHeaderBytes));
  return DecodeEntry(bytes, path);
}

}  // namespace lineage::cache::disk
