// Opening FileDiskTiers in the disk tests, with their log lines captured.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
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

}  // namespace lineage::cache::disk::testing
