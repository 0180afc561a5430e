#include "trace/segmenter.h"

#include <xxhash.h>

#include <algorithm>

namespace lineage::trace {

namespace {

constexpr uint64_t kIdMask = 0x7FFFFFFFFFFFFFFFull;
constexpr uint64_t kReplySalt = 0x5265706c79000000ull;  // a reply's id is not a prompt prefix's

uint64_t Hash(std::span<const int32_t> tokens, uint64_t seed) {
  return XXH64(tokens.data(), tokens.size_bytes(), seed) & kIdMask;
}

int64_t SharedTokens(std::span<const int32_t> a, std::span<const int32_t> b) {
  size_t n = std::min(a.size(), b.size());
  return static_cast<int64_t>(std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
}

// P(L) for every L of one prompt: the grid chain G is computed once.
class PrefixIds {
 public:
  PrefixIds(std::span<const int32_t> tokens, uint64_t salt) : tokens_(tokens) {
    constexpr int64_t B = TraceSegmenter::kBlockTokens;
    grid_.push_back(salt);
    for (size_t at = 0; at + B <= tokens.size(); at += B) grid_.push_back(Hash(tokens.subspan(at, B), grid_.back()));
  }
  // The id of a segment ending at `length` (and the key of what follows it).
  uint64_t At(int64_t length) const {
    constexpr int64_t B = TraceSegmenter::kBlockTokens;
    int64_t block = length / B;
    if (length % B == 0) return grid_[static_cast<size_t>(block)];
    return Hash(tokens_.subspan(static_cast<size_t>(block * B), static_cast<size_t>(length - block * B)),
                grid_[static_cast<size_t>(block)]);
  }

 private:
  std::span<const int32_t> tokens_;
  std::vector<uint64_t> grid_;  // grid_[j] = G(j * B)
};

}  // namespace

SegmentedRequest TraceSegmenter::Cut(std::span<const int32_t> prompt, std::span<const int64_t> cut_points,
                                     std::span<const int32_t> output) {
  const int64_t m = static_cast<int64_t>(prompt.size());
  std::vector<int64_t> cuts;
  for (int64_t c : cut_points)
    if (c > 0 && c < m) cuts.push_back(c);
  cuts.push_back(m);
  std::sort(cuts.begin(), cuts.end());
  PrefixIds ids(prompt, salt_);
  SegmentedRequest out;
  int64_t pos = 0;
  while (pos < m) {
    const uint64_t key = ids.At(pos);
    std::span<const int32_t> rest = prompt.subspan(static_cast<size_t>(pos));
    if (Match c = Find(key, rest); c.shared_tokens > 0) {
      out.prompt.push_back({c.id, c.shared_tokens});
      pos += c.shared_tokens;
      continue;
    }
    int64_t end = std::min((pos / kBlockTokens + 1) * kBlockTokens, *std::upper_bound(cuts.begin(), cuts.end(), pos));
    uint64_t id = ids.At(end);
    out.prompt.push_back({id, end - pos});
    Remember(key, id, rest.first(static_cast<size_t>(end - pos)));
    pos = end;
  }
  const uint64_t end_key = ids.At(m);
  out.output = {Hash(output, end_key ^ kReplySalt), static_cast<int64_t>(output.size())};
  if (!output.empty()) Remember(end_key, out.output.id, output);
  return out;
}

TraceSegmenter::Match TraceSegmenter::Find(uint64_t key, std::span<const int32_t> rest) {
  Match best;
  const Continuation* from_old = nullptr;
  for (Generation* g : {&current_, &old_}) {
    auto it = g->find(key);
    if (it == g->end()) continue;
    for (const Continuation& c : it->second) {
      int64_t shared = SharedTokens(c.tokens, rest);
      if (shared > best.shared_tokens) {
        best = {c.id, shared};
        from_old = g == &old_ ? &c : nullptr;
      }
    }
  }
  if (from_old) {
    // Still in use: keep it in the current generation (copied first, as
    // Remember() may rotate the generations).
    Continuation copy = *from_old;
    Remember(key, copy.id, copy.tokens);
  }
  return best;
}

void TraceSegmenter::Remember(uint64_t key, uint64_t id, std::span<const int32_t> tokens) {
  if (memory_tokens_ <= 0) return;
  std::vector<Continuation>& list = current_[key];
  auto same = std::find_if(list.begin(), list.end(), [&](const Continuation& c) { return c.id == id; });
  if (same == list.end()) {
    list.push_back({id, std::vector<int32_t>(tokens.begin(), tokens.end())});
    current_tokens_ += static_cast<int64_t>(tokens.size());
  } else if (same->tokens.size() < tokens.size()) {
    // The same id is the same real tokens: keep the longest known run.
    current_tokens_ += static_cast<int64_t>(tokens.size() - same->tokens.size());
    same->tokens.assign(tokens.begin(), tokens.end());
  }
  if (current_tokens_ > memory_tokens_) {
    old_ = std::move(current_);
    old_tokens_ = current_tokens_;
    current_ = Generation();
    current_tokens_ = 0;
  }
}

}  // namespace lineage::trace
