#include "text/added_tokens.h"

#include <algorithm>
#include <cstring>

namespace lineage::text {

AddedTokenMatcher::AddedTokenMatcher(std::vector<Entry> entries) {
  std::erase_if(entries, [](const Entry& e) { return e.text.empty(); });
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    auto fa = static_cast<uint8_t>(a.text[0]), fb = static_cast<uint8_t>(b.text[0]);
    return fa != fb ? fa < fb : a.text.size() > b.text.size();
  });
  entries_ = std::move(entries);
  size_t k = 0;
  for (int b = 0; b < 256; ++b) {
    first_[b] = static_cast<uint32_t>(k);
    while (k < entries_.size() && static_cast<uint8_t>(entries_[k].text[0]) == b) ++k;
    if (k > first_[b]) starts_.set(b);
  }
  first_[256] = static_cast<uint32_t>(k);
  if (starts_.count() == 1) {
    for (int b = 0; b < 256; ++b) {
      if (starts_[b]) single_first_ = b;
    }
  }
  for (const Entry& e : entries_) has_plain_ |= !e.special;
}

bool AddedTokenMatcher::FindNext(std::string_view text, size_t from, bool parse_special, Match* m) const {
  if (entries_.empty() || (!parse_special && !has_plain_)) return false;
  for (size_t pos = from; pos < text.size(); ++pos) {
    if (single_first_ >= 0) {  // the common case (every token starts with '<'): memchr
      const void* hit = std::memchr(text.data() + pos, single_first_, text.size() - pos);
      if (hit == nullptr) return false;
      pos = static_cast<const char*>(hit) - text.data();
    }
    auto b = static_cast<uint8_t>(text[pos]);
    if (!starts_[b]) continue;
    std::string_view rest = text.substr(pos);
    for (uint32_t k = first_[b]; k < first_[b + 1]; ++k) {
      const Entry& e = entries_[k];
      if (e.special && !parse_special) continue;
      if (rest.size() >= e.text.size() && std::memcmp(rest.data(), e.text.data(), e.text.size()) == 0) {
        *m = Match{pos, pos + e.text.size(), &e};
        return true;
      }
    }
  }
  return false;
}

}  // namespace lineage::text
