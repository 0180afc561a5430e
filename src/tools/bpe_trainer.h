// BpeTrainer: learns byte-level BPE merges from word counts, the classic
// way: repeatedly merge the most frequent adjacent pair (ties: the pair of
// lower token ids, so the result is deterministic). Used to build the
// synthetic vocabulary of test models. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lineage::text {

struct TrainedBpe {
  // Raw bytes of every token: ids 0..255 are the single bytes in GPT-2
  // vocabulary order (ByteTokenOrder), then one token per merge.
  std::vector<std::string> token_bytes;
  // (left id, right id) of each merge, in rank order; merge i made token 256 + i.
  std::vector<std::pair<int32_t, int32_t>> merges;
};

// Learns at most `max_merges` merges; stops early when no pair occurs at
// least `min_count` times (counting each word with its multiplicity).
TrainedBpe TrainBpe(const std::vector<std::pair<std::string, int64_t>>& word_counts, size_t max_merges,
                    int64_t min_count = 2);

}  // namespace lineage::text
