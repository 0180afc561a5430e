// The writer queue: Put never waits for the disk; a full queue drops the
// oldest pending write that a newer pending snapshot extends, then the
// oldest non-anchor; an entry is visible only once its file is written.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

// Holds every write until Open() is called.
class GateEnv final : public ForwardingFileEnv {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  Status WriteAtomic(const std::string& tmp, const std::string& path,
                     std::span<const std::span<const uint8_t>> parts) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    lock.unlock();
    return base()->WriteAtomic(tmp, path, parts);
  }
  void WaitForAWriter() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

Tokens Seq(int64_t n, TokenId first) {
  Tokens t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = first + static_cast<TokenId>(i);
  return t;
}

Tokens Cat(const Tokens& a, const Tokens& b) {
  Tokens t = a;
  t.insert(t.end(), b.begin(), b.end());
  return t;
}

TEST(DiskQueue, AFullQueueDropsASupersededSnapshotFirstAndNeverBlocks) {
  GateEnv gate;
  FileDiskTierOptions o;
  o.dir = FreshDir("queue");
  o.env = &gate;
  o.max_pending_writes = 3;
  auto tier = OpenTierWith(o, nullptr);
  ASSERT_TRUE(tier->Put(MakeRecord(1, Seq(10, 1))).ok());
  gate.WaitForAWriter();  // entry 1 is being written, stuck on the disk
  EXPECT_TRUE(tier->Contains(1));
  EXPECT_FALSE(tier->Lookup(Seq(12, 1), 0, true).has_value()) << "not visible before its file is written";

  const Tokens turn1 = Seq(20, 100), turn2 = Seq(30, 100);
  ASSERT_TRUE(tier->Put(MakeRecord(2, Seq(10, 500), {}, /*anchor=*/true)).ok());
  ASSERT_TRUE(tier->Put(MakeRecord(3, turn1)).ok());
  ASSERT_TRUE(tier->Put(MakeRecord(4, Seq(10, 900))).ok());
  ASSERT_TRUE(tier->Put(MakeRecord(5, turn2)).ok());  // full: 3 is superseded by 5
  EXPECT_FALSE(tier->Contains(3));
  EXPECT_TRUE(tier->Contains(2) && tier->Contains(4) && tier->Contains(5));
  ASSERT_TRUE(tier->Put(MakeRecord(6, Seq(10, 1300))).ok());  // full: the oldest non-anchor, 4
  EXPECT_FALSE(tier->Contains(4));
  EXPECT_TRUE(tier->Contains(2)) << "anchors go last";
  ASSERT_TRUE(tier->Put(MakeRecord(5, Cat(turn2, Seq(5, 7)))).ok()) << "a newer version replaces the queued one";
  EXPECT_EQ(tier->Counters().dropped_writes, 2);
  EXPECT_EQ(tier->Counters().superseded_writes, 1);
  EXPECT_EQ(tier->Counters().pending_writes, 4);

  gate.Open();
  tier->Flush();
  EXPECT_EQ(tier->Stats().entries, 4);
  for (EntryId id : {1, 2, 5, 6}) EXPECT_TRUE(tier->Contains(id)) << id;
  auto p = tier->Lookup(Cat(Cat(turn2, Seq(5, 7)), Seq(1, 3)), 0, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->length, 35);
  ExpectEveryServedEntryVerifies(*tier);
}

TEST(DiskQueue, EraseCancelsAPendingOrInFlightWrite) {
  GateEnv gate;
  FileDiskTierOptions o;
  o.dir = FreshDir("cancel");
  o.env = &gate;
  auto tier = OpenTierWith(o, nullptr);
  ASSERT_TRUE(tier->Put(MakeRecord(1, Seq(10, 1))).ok());
  gate.WaitForAWriter();
  ASSERT_TRUE(tier->Put(MakeRecord(2, Seq(10, 100))).ok());
  tier->Erase(1);  // in flight
  tier->Erase(2);  // queued
  EXPECT_FALSE(tier->Contains(1));
  EXPECT_FALSE(tier->Contains(2));
  gate.Open();
  tier->Flush();
  EXPECT_EQ(tier->Stats().entries, 0);
  EXPECT_EQ(FilesUnder(o.dir, ".ent") + FilesUnder(o.dir, ".kvp") + FilesUnder(o.dir, ".rst"), 0);
  EXPECT_EQ(tier->Stats().bytes, 0);
}

}  // namespace
}  // namespace lineage::cache::disk::testing
