#include "server/kv_events/kv_event_blocks.h"

#include <xxhash.h>

#include <cstring>

namespace lineage::server {

uint64_t KvBlockHash(std::optional<uint64_t> parent, const uint32_t* tokens, int64_t block_tokens) {
  std::vector<uint8_t> buf(8 + 4 * static_cast<size_t>(block_tokens));
  const uint64_t p = parent.value_or(0);
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<uint8_t>(p >> (8 * i));
  for (int64_t t = 0; t < block_tokens; ++t) {
    for (int i = 0; i < 4; ++i) buf[8 + 4 * t + i] = static_cast<uint8_t>(tokens[t] >> (8 * i));
  }
  return XXH3_64bits(buf.data(), buf.size());
}

KvBlockSet BlocksOf(const std::vector<RestorablePrefix>& prefixes, int64_t block_tokens) {
  KvBlockSet out;
  for (const RestorablePrefix& p : prefixes) {
    std::optional<uint64_t> parent;
    const int64_t full = std::min<int64_t>(p.length, static_cast<int64_t>(p.tokens.size())) / block_tokens;
    for (int64_t j = 0; j < full; ++j) {
      const auto* first = reinterpret_cast<const uint32_t*>(p.tokens.data()) + j * block_tokens;
      const uint64_t h = KvBlockHash(parent, first, block_tokens);
      auto [it, fresh] = out.try_emplace(h);
      if (fresh) it->second = {parent, std::vector<uint32_t>(first, first + block_tokens), j};
      parent = h;
    }
  }
  return out;
}

}  // namespace lineage::server
