#include "text/bpe.h"

#include <limits>
#include <queue>

namespace lineage::text {
namespace {

constexpr int32_t kNoRank = std::numeric_limits<int32_t>::max();

inline uint64_t Mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

// Words up to this many bytes use the array loop; longer ones the heap.
constexpr size_t kShortWordBytes = 64;

}  // namespace

BpeModel BpeModel::Build(const std::array<TokenId, 256>& byte_ids, const std::vector<Merge>& merges) {
  BpeModel m;
  m.byte_ids_ = byte_ids;
  size_t cap = 16;
  while (cap < merges.size() * 2) cap <<= 1;
  m.slots_.assign(cap, Slot{});
  m.mask_ = cap - 1;
  for (size_t r = 0; r < merges.size(); ++r) {
    const Merge& mg = merges[r];
    uint64_t key = Key(mg.left, mg.right);
    for (uint64_t i = Mix(key) & m.mask_;; i = (i + 1) & m.mask_) {
      Slot& s = m.slots_[i];
      if (s.key == key) break;  // duplicate pair: the first rank wins
      if (s.key == kEmpty) {
        s = Slot{key, static_cast<int32_t>(r), mg.merged};
        ++m.num_merges_;
        break;
      }
    }
  }
  return m;
}

const BpeModel::Slot* BpeModel::Find(TokenId a, TokenId b) const {
  if (a < 0 || b < 0) return nullptr;
  uint64_t key = Key(a, b);
  for (uint64_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.key == key) return &s;
    if (s.key == kEmpty) return nullptr;
  }
}

void BpeModel::EncodeWord(std::string_view bytes, std::vector<TokenId>* out) const {
  thread_local std::vector<TokenId> ids;
  ids.clear();
  for (char c : bytes) ids.push_back(byte_ids_[static_cast<uint8_t>(c)]);
  if (ids.size() > 1) {
    if (ids.size() <= kShortWordBytes) EncodeShort(&ids);
    else EncodeLong(&ids);
  }
  for (TokenId id : ids) {
    if (id != kNoToken) out->push_back(id);
  }
}

// Keeps the rank of every adjacent pair in an array: each merge rescans the
// array for the minimum and recomputes only the two pairs it changed.
void BpeModel::EncodeShort(std::vector<TokenId>* ids_ptr) const {
  std::vector<TokenId>& ids = *ids_ptr;
  int32_t ranks[kShortWordBytes];
  TokenId merged[kShortWordBytes];
  size_t n = ids.size();
  auto pair_at = [&](size_t i) {
    const Slot* s = Find(ids[i], ids[i + 1]);
    ranks[i] = s ? s->rank : kNoRank;
    merged[i] = s ? s->merged : kNoToken;
  };
  for (size_t i = 0; i + 1 < n; ++i) pair_at(i);
  while (n > 1) {
    size_t best = 0;
    int32_t best_rank = ranks[0];
    for (size_t i = 1; i + 1 < n; ++i) {
      if (ranks[i] < best_rank) best_rank = ranks[i], best = i;
    }
    if (best_rank == kNoRank) break;
    ids[best] = merged[best];
    for (size_t i = best + 1; i + 1 < n; ++i) ids[i] = ids[i + 1];
    for (size_t i = best + 1; i + 2 < n; ++i) ranks[i] = ranks[i + 1], merged[i] = merged[i + 1];
    --n;
    if (best > 0) pair_at(best - 1);
    if (best + 1 < n) pair_at(best);
  }
  ids.resize(n);
}

// Linked list of symbols and a min-heap of candidate pairs; entries made
// stale by an earlier merge are recognized and skipped when popped.
void BpeModel::EncodeLong(std::vector<TokenId>* ids_ptr) const {
  std::vector<TokenId>& ids = *ids_ptr;
  const int n = static_cast<int>(ids.size());
  std::vector<int> prev(n), next(n);
  for (int i = 0; i < n; ++i) prev[i] = i - 1, next[i] = i + 1 < n ? i + 1 : -1;
  struct Cand {
    int32_t rank;
    int left;
    TokenId left_id, right_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto push = [&](int left) {
    if (left < 0 || next[left] < 0) return;
    const Slot* s = Find(ids[left], ids[next[left]]);
    if (s) heap.push({s->rank, left, ids[left], ids[next[left]]});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    int r = next[c.left];
    if (ids[c.left] != c.left_id || r < 0 || ids[r] != c.right_id) continue;  // stale
    ids[c.left] = Find(c.left_id, c.right_id)->merged;
    ids[r] = kNoToken - 1;  // removed
    next[c.left] = next[r];
    if (next[r] >= 0) prev[next[r]] = c.left;
    push(prev[c.left]);
    push(c.left);
  }
  size_t k = 0;
  for (int i = 0; i >= 0 && i < n; i = next[i]) ids[k++] = ids[i];
  ids.resize(k);
}

}  // namespace lineage::text
