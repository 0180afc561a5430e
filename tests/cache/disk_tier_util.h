// Opening FileDiskTiers in the disk tests, with their log lines captured.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "cache/disk/file_disk_tier.h"
#include "disk_test_codec.h"

namespace lineage::cache::disk::testing {

class LogSink {
 public:
  std::function<void(const std::string&)> fn() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    };
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  int64_t Count(const std::string& part) {
    int64_t n = 0;
    for (const std::string& l : lines()) n += l.find(part) != std::string::npos;
    return n;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

inline std::unique_ptr<FileDiskTier> OpenTierWith(FileDiskTierOptions o, LogSink* log,
                                                  std::shared_ptr<const StateCodec> codec = nullptr) {
  if (log) o.log = log->fn();
  auto tier = FileDiskTier::Open(o, codec ? codec : std::make_shared<TestCodec>());
  EXPECT_TRUE(tier.ok()) << tier.status().ToString();
  return tier.ok() ? std::move(*tier) : nullptr;
}

inline std::unique_ptr<FileDiskTier> OpenTier(const std::string& dir, LogSink* log,
                                              std::shared_ptr<const StateCodec> codec = nullptr,
                                              int64_t cap_bytes = int64_t{1} << 40, FileEnv* env = nullptr,
                                              int64_t max_pending = 32) {
  FileDiskTierOptions o;
  o.dir = dir;
  o.cap_bytes = cap_bytes;
  o.env = env;
  o.max_pending_writes = max_pending;
  if (log) o.log = log->fn();
  auto tier = FileDiskTier::Open(o, codec ? codec : std::make_shared<TestCodec>());
  EXPECT_TRUE(tier.ok()) << tier.status().ToString();
  return tier.ok() ? std::move(*tier) : nullptr;
}

// Loads every point of every served entry and checks it against its tokens.
inline void ExpectEveryServedEntryVerifies(FileDiskTier& tier, int64_t* served = nullptr) {
  int64_t n = 0;
  for (const StoredEntryInfo& e : tier.List()) {
    for (const StateRef& s : e.states) {
      Result<DiskLoad> l = tier.Load(e.id, s.n);
      ASSERT_TRUE(l.ok()) << l.status().ToString();
      EXPECT_TRUE(PayloadMatches(e.tokens, s.n, l->kv, l->state)) << "entry " << e.file_id << " at " << s.n;
      ++n;
    }
  }
  if (served) *served = n;
}

inline int64_t PageFileBytes(int64_t rows) {
  return static_cast<int64_t>(BlobFileBytes(static_cast<uint64_t>(TestCodec().page_payload_bytes(rows))));
}
inline int64_t StateFileBytes() { return static_cast<int64_t>(BlobFileBytes(kStateFloats * 4)); }
inline int64_t EntryFileBytes(int64_t tokens, int64_t pages, int64_t states) {
  return kEntryHeaderBytes + tokens * 4 + pages * 16 + states * 32 + 8;
}

// Turn `turn` of conversation `conv`: 16 tokens every conversation shares,
// then its own; each turn extends the previous one by 7 tokens.
inline Tokens ConversationTurn(int conv, int turn) {
  Tokens t(static_cast<size_t>(5 + 7 * turn));
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<TokenId>(i < 16 ? i + 1 : conv * 10000 + i);
  return t;
}

// A child process's writes until it is killed: six turns of a random one of
// `conversations` conversations at a time, each turn a new entry that mostly
// erases the turn it extends (as absorption does), turn 0 of conversation 0
// an anchor, a Flush every `flush_every` conversations.
[[noreturn]] inline void WriteConversationsUntilKilled(FileDiskTier& tier, uint32_t seed, int conversations,
                                                       int flush_every) {
  std::mt19937 rng(seed);
  EntryId next = 1;
  for (int round = 0;; ++round) {
    const int conv = static_cast<int>(rng() % static_cast<uint32_t>(conversations));
    EntryId prev = kNoEntry;
    for (int turn = 0; turn < 6; ++turn) {
      const Tokens t = ConversationTurn(conv, turn);
      std::vector<int64_t> points;
      if (turn > 0) points.push_back(static_cast<int64_t>(ConversationTurn(conv, turn - 1).size()));
      const EntryId id = next++;
      (void)tier.Put(MakeRecord(id, t, points, /*anchor=*/turn == 0 && conv == 0));
      if (prev != kNoEntry && rng() % 4 != 0) tier.Erase(prev);
      prev = id;
    }
    if (round % flush_every == 0) tier.Flush();
  }
}

}  // namespace lineage::cache::disk::testing
