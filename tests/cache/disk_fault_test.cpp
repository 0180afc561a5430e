// Fault loops over the disk tier's writes: the Nth write fails with a full
// disk or an I/O error (once, or from then on), or is torn. Writes get
// disabled with one log line, the caller is never blocked, and nothing
// damaged is ever served — in this run or the next.
#include <gtest/gtest.h>

#include <thread>

#include "disk_faulty_env.h"
#include "disk_tier_util.h"
#include "cache/disk/maintenance.h"
#include "full_disk_env.h"

namespace lineage::cache::disk::testing {
namespace {

Tokens Turn(int64_t k) {  // turn k of one conversation: 11 tokens per turn
  Tokens t(static_cast<size_t>(11 * (k + 1)));
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<TokenId>(i * 3 + 1);
  return t;
}

// A conversation of `turns` turns, each absorbing the previous, plus an anchor.
void RunConversation(FileDiskTier& tier, int turns) {
  (void)tier.Put(MakeRecord(100, Turn(0), {}, /*anchor=*/true));
  for (int k = 0; k < turns; ++k) {
    std::vector<int64_t> points;
    if (k > 0) points.push_back(static_cast<int64_t>(Turn(k - 1).size()));
    (void)tier.Put(MakeRecord(static_cast<EntryId>(k + 1), Turn(k), points));
    if (k > 0) tier.Erase(static_cast<EntryId>(k));
    tier.Flush();
  }
}

// Every served entry either verifies or is refused as corrupt (torn files).
void ExpectNothingDamagedServed(FileDiskTier& tier, int64_t* refused) {
  for (const StoredEntryInfo& e : tier.List()) {
    for (const StateRef& s : e.states) {
      Result<DiskLoad> l = tier.Load(e.id, s.n);
      if (!l.ok()) {
        EXPECT_EQ(l.status().code(), StatusCode::kCorrupt) << l.status().ToString();
        ++*refused;
        break;
      }
      EXPECT_TRUE(PayloadMatches(e.tokens, s.n, l->kv, l->state));
    }
  }
}

TEST(DiskFaults, AFailedWriteDisablesWritesAndNothingCorruptIsServed) {
  FaultyEnv probe(1 << 30, FaultyEnv::Mode::kNoSpace, false);
  {
    FileDiskTierOptions o;
    o.dir = FreshDir("fault_probe");
    o.env = &probe;
    auto tier = OpenTierWith(o, nullptr);
    RunConversation(*tier, 6);
  }
  const int64_t total_writes = probe.writes();
  ASSERT_GT(total_writes, 20);

  for (auto mode : {FaultyEnv::Mode::kNoSpace, FaultyEnv::Mode::kIoError}) {
    for (bool persistent : {false, true}) {
      for (int64_t n = 1; n <= total_writes; ++n) {
        SCOPED_TRACE("write " + std::to_string(n) + (persistent ? " onwards" : " once") +
                     (mode == FaultyEnv::Mode::kNoSpace ? ", disk full" : ", I/O error"));
        const std::string dir = FreshDir("fault");
        FaultyEnv env(n, mode, persistent);
        LogSink log;
        FileDiskTierOptions o;
        o.dir = dir;
        o.env = &env;
        o.disable_writes_ms = 60'000;
        auto tier = OpenTierWith(o, &log);
        RunConversation(*tier, 6);
        const FileTierCounters c = tier->Counters();
        EXPECT_EQ(env.failures(), 1) << "writes stop after the first failure";
        EXPECT_TRUE(c.writes_disabled);
        EXPECT_EQ(c.times_disabled, 1);
        EXPECT_EQ(log.Count("writes disabled for 60 s"), 1);
        EXPECT_EQ(log.lines().size(), 1u);
        EXPECT_FALSE(tier->Put(MakeRecord(99, Turn(9))).ok()) << "dropped while disabled, not blocked";
        ExpectEveryServedEntryVerifies(*tier);
        EXPECT_EQ(tier->Stats().bytes, BytesUnder(dir)) << "no orphan is left behind";
        tier.reset();
        // The next run (a healthy disk) serves only whole entries.
        LogSink log2;
        auto again = OpenTier(dir, &log2);
        ExpectEveryServedEntryVerifies(*again);
        EXPECT_EQ(again->Counters().skipped_damaged, 0);
      }
    }
  }
}

TEST(DiskFaults, TornWritesAreRejectedWhenRead) {
  FaultyEnv probe(1 << 30, FaultyEnv::Mode::kTorn, false);
  {
    FileDiskTierOptions o;
    o.dir = FreshDir("torn_probe");
    o.env = &probe;
    auto tier = OpenTierWith(o, nullptr);
    RunConversation(*tier, 4);
  }
  int64_t refused_total = 0;
  for (int64_t n = 1; n <= probe.writes(); ++n) {
    SCOPED_TRACE("torn write " + std::to_string(n));
    const std::string dir = FreshDir("torn");
    FaultyEnv env(n, FaultyEnv::Mode::kTorn, false);
    FileDiskTierOptions o;
    o.dir = dir;
    o.env = &env;
    LogSink log;
    {
      auto tier = OpenTierWith(o, &log);
      RunConversation(*tier, 4);
      ExpectNothingDamagedServed(*tier, &refused_total);
    }
    auto again = OpenTier(dir, &log);
    int64_t refused = 0;
    ExpectNothingDamagedServed(*again, &refused);
    refused_total += refused;
  }
  EXPECT_GT(refused_total, 0) << "some torn file was caught";
}

TEST(DiskFaults, WritesComeBackAfterTheDisabledWindow) {
  const std::string dir = FreshDir("reenable");
  FaultyEnv env(1, FaultyEnv::Mode::kNoSpace, false);
  LogSink log;
  FileDiskTierOptions o;
  o.dir = dir;
  o.env = &env;
  o.disable_writes_ms = 30;
  auto tier = OpenTierWith(o, &log);
  ASSERT_TRUE(tier->Put(MakeRecord(1, Turn(1))).ok());
  tier->Flush();
  EXPECT_FALSE(tier->Contains(1));
  EXPECT_TRUE(tier->Counters().writes_disabled);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  ASSERT_TRUE(tier->Put(MakeRecord(2, Turn(2))).ok());
  tier->Flush();
  EXPECT_TRUE(tier->Contains(2));
  EXPECT_EQ(log.Count("enabled again"), 1);
  ExpectEveryServedEntryVerifies(*tier);
}

// The directory lock goes through the FileEnv too: a lock that fails with
// an I/O error is a clear error at open, and one held by another owner says so.
TEST(DiskFaults, AFailedDirectoryLockIsAClearErrorAtOpen) {
  const std::string dir = FreshDir("lock_fault");
  lineage::testing::FullDiskEnv env(/*budget=*/0, /*fail_locks=*/true);
  FileDiskTierOptions o;
  o.dir = dir;
  o.env = &env;
  auto tier = FileDiskTier::Open(o, std::make_shared<TestCodec>());
  ASSERT_FALSE(tier.ok());
  EXPECT_EQ(tier.status().code(), StatusCode::kIoError);
  EXPECT_NE(tier.status().ToString().find("flock"), std::string::npos) << tier.status().ToString();
  EXPECT_NE(tier.status().ToString().find("disk tier"), std::string::npos);

  FileDiskTierOptions plain;
  plain.dir = dir;
  auto owner = FileDiskTier::Open(plain, std::make_shared<TestCodec>());
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  auto second = FileDiskTier::Open(plain, std::make_shared<TestCodec>());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().ToString().find("in use by another process"), std::string::npos) << second.status().ToString();
  EXPECT_EQ(CollectGarbage(&env, DirLayout(dir), std::nullopt, false).status().code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace lineage::cache::disk::testing
