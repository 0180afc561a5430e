#include "tools/bpe_trainer.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "text/byte_level.h"

namespace lineage::text {
namespace {

uint64_t Key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

struct Candidate {
  int64_t count;
  uint64_t key;
  // Highest count first; on ties the smaller key (lower ids) first.
  bool operator<(const Candidate& o) const { return count != o.count ? count < o.count : key > o.key; }
};

}  // namespace

TrainedBpe TrainBpe(const std::vector<std::pair<std::string, int64_t>>& word_counts, size_t max_merges,
                    int64_t min_count) {
  TrainedBpe out;
  int32_t byte_id[256];
  const uint8_t* order = ByteTokenOrder();
  for (int i = 0; i < 256; ++i) {
    byte_id[order[i]] = i;
    out.token_bytes.push_back(std::string(1, static_cast<char>(order[i])));
  }

  std::vector<std::vector<int32_t>> words;
  std::vector<int64_t> counts;
  for (const auto& [w, c] : word_counts) {
    if (w.size() < 2 || c <= 0) continue;
    std::vector<int32_t> syms;
    for (char ch : w) syms.push_back(byte_id[static_cast<uint8_t>(ch)]);
    words.push_back(std::move(syms));
    counts.push_back(c);
  }

  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<int32_t>> pair_words;
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& s = words[w];
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      uint64_t k = Key(s[i], s[i + 1]);
      pair_count[k] += counts[w];
      auto& pw = pair_words[k];
      if (pw.empty() || pw.back() != static_cast<int32_t>(w)) pw.push_back(static_cast<int32_t>(w));
    }
  }
  std::priority_queue<Candidate> heap;
  for (const auto& [k, c] : pair_count) heap.push({c, k});

  std::vector<int32_t> seen(words.size(), -1);
  std::unordered_set<uint64_t> changed;
  while (out.merges.size() < max_merges && !heap.empty()) {
    Candidate top = heap.top();
    heap.pop();
    auto it = pair_count.find(top.key);
    if (it == pair_count.end() || it->second != top.count) continue;  // stale
    if (top.count < min_count) break;
    const int32_t a = static_cast<int32_t>(top.key >> 32), b = static_cast<int32_t>(top.key & 0xFFFFFFFF);
    const int32_t merged = static_cast<int32_t>(out.token_bytes.size());
    const int32_t merge_index = static_cast<int32_t>(out.merges.size());
    out.merges.emplace_back(a, b);
    out.token_bytes.push_back(out.token_bytes[a] + out.token_bytes[b]);

    changed.clear();
    std::vector<int32_t> affected = std::move(pair_words[top.key]);
    pair_words.erase(top.key);
    for (int32_t w : affected) {
      if (seen[w] == merge_index) continue;
      seen[w] = merge_index;
      auto& s = words[w];
      const int64_t c = counts[w];
      bool has = false;
      for (size_t i = 0; i + 1 < s.size(); ++i) has |= (s[i] == a && s[i + 1] == b);
      if (!has) continue;
      // Take the word's pairs out, merge, and put the new pairs back.
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        uint64_t k = Key(s[i], s[i + 1]);
        pair_count[k] -= c;
        changed.insert(k);
      }
      std::vector<int32_t> merged_syms;
      merged_syms.reserve(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          merged_syms.push_back(merged);
          ++i;
        } else {
          merged_syms.push_back(s[i]);
        }
      }
      s = std::move(merged_syms);
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        uint64_t k = Key(s[i], s[i + 1]);
        pair_count[k] += c;
        changed.insert(k);
        if (s[i] == merged || s[i + 1] == merged) pair_words[k].push_back(w);
      }
    }
    for (uint64_t k : changed) {
      auto pc = pair_count.find(k);
      if (pc == pair_count.end()) continue;
      if (pc->second <= 0) {
        pair_count.erase(pc);
      } else if (k != top.key) {
        heap.push({pc->second, k});
      }
    }
    pair_count.erase(top.key);
  }
  return out;
}

}  // namespace lineage::text
