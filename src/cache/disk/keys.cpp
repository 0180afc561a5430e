#include "cache/disk/keys.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <cassert>
#include <cstring>

namespace lineage::cache::disk {
namespace {

Key128 FromHash(XXH128_hash_t h) {
  Key128 k;
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  std::memcpy(k.bytes.data(), c.digest, 16);
  return k;
}

}  // namespace

KeyChain::KeyChain(const Key128& fingerprint, int64_t page_tokens, TokenSpan tokens)
    : page_tokens_(page_tokens), num_tokens_(static_cast<int64_t>(tokens.size())),
      tokens_(tokens.begin(), tokens.end()) {
  uint8_t seed[20];
  std::memcpy(seed, fingerprint.bytes.data(), 16);
  PutU32(seed + 16, static_cast<uint32_t>(page_tokens));
  root_ = FromHash(XXH3_128bits(seed, sizeof(seed)));
  Key128 prev = root_;
  for (int64_t p = 0; (p + 1) * page_tokens_ <= num_tokens_; ++p) {
    prev = Link(prev, p * page_tokens_, page_tokens_);
    full_.push_back(prev);
  }
}

Key128 KeyChain::Link(const Key128& prev, int64_t first, int64_t num_rows) const {
  XXH3_state_t st;
  XXH3_128bits_reset(&st);
  XXH3_128bits_update(&st, prev.bytes.data(), 16);
  uint8_t rows[4];
  PutU32(rows, static_cast<uint32_t>(num_rows));
  XXH3_128bits_update(&st, rows, 4);
  // Token ids are hashed as u32 little-endian: the in-memory int32 bytes.
  XXH3_128bits_update(&st, tokens_.data() + first, static_cast<size_t>(num_rows) * kTokenBytes);
  return FromHash(XXH3_128bits_digest(&st));
}

Key128 KeyChain::PageKeyAt(int64_t p, int64_t length) const {
  assert(length <= num_tokens_ && p * page_tokens_ < length);
  const int64_t rows = std::min(page_tokens_, length - p * page_tokens_);
  if (rows == page_tokens_) return full_[static_cast<size_t>(p)];
  return Link(p == 0 ? root_ : full_[static_cast<size_t>(p - 1)], p * page_tokens_, rows);
}

Key128 KeyChain::StateKey(int64_t n) const {
  assert(n >= 1 && n <= num_tokens_);
  const Key128 page = PageKeyAt((n - 1) / page_tokens_, n);
  uint8_t buf[17];
  buf[0] = 'S';
  std::memcpy(buf + 1, page.bytes.data(), 16);
  return FromHash(XXH3_128bits(buf, sizeof(buf)));
}

}  // namespace lineage::cache::disk
