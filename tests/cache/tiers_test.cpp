// RAM budget and the disk tier (DESIGN.md §3.5): disk is read only for a
// longer restore point; writes carry only new pages; LRU with anchors last.
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

constexpr int64_t kPage = 1024;
constexpr int64_t kBlob = 256;
const PayloadShape kShape{64, kPage, kBlob};

int64_t Pages(int64_t tokens) { return (tokens + 63) / 64; }

TEST(CacheTiers, DiskIsReadOnlyForALongerRestorePoint) {
  CacheOptions o;
  o.ram_budget_bytes = 30 * 1024;
  Harness h(o, kShape, /*disk_bytes=*/int64_t{1} << 30);
  TokenSource src;
  const Tokens x = src.Fresh(1500);
  Outcome ox = h.Run(x);
  EXPECT_TRUE(h.disk()->Contains(ox.entry)) << "entries are written after commit";
  const Tokens y = src.Fresh(1500);
  h.Run(y);  // pushes x out of RAM
  ASSERT_EQ(h.Info(ox.entry), nullptr);
  EXPECT_EQ(h.disk()->Stats().bytes_read, 0);

  // RAM holds y at 1500; the disk's copy of y is no longer: no read.
  Outcome oy = h.Run(Cat({y, src.Fresh(50)}));
  EXPECT_EQ(oy.restore.length, 1500);
  EXPECT_EQ(oy.restore.tier, Tier::kRam);
  EXPECT_EQ(h.disk()->Stats().bytes_read, 0);

  // Only the disk holds x: it is read, and exactly rows [0, 1500) and one state.
  Outcome ox2 = h.Run(Cat({x, src.Fresh(50)}));
  EXPECT_EQ(ox2.restore.length, 1500);
  EXPECT_EQ(ox2.restore.tier, Tier::kDisk);
  EXPECT_EQ(ox2.lookup.best_ram.length, 0);
  EXPECT_EQ(h.disk()->Stats().bytes_read, Pages(1500) * kPage + kBlob);
  // Its commit absorbs the disk entry: the file goes, its end is a boundary.
  EXPECT_EQ(ox2.commit.absorbed, std::vector<EntryId>{ox.entry});
  EXPECT_FALSE(h.disk()->Contains(ox.entry));
  ASSERT_NE(h.Info(ox2.entry), nullptr);
  EXPECT_EQ(Points(h.Info(ox2.entry)).back(), std::make_pair(int64_t{1500}, PointKind::kFinal));
}

TEST(CacheTiers, DiskWritesOnlyNewPages) {
  Harness h(EventPointsOnly(), kShape, int64_t{1} << 30);
  TokenSource src;
  const Tokens t1 = src.Fresh(1000);  // 16 pages, a guard at 984
  h.Run(t1);
  EXPECT_EQ(h.disk()->Stats().bytes_written, Pages(1000) * kPage + 2 * kBlob);
  // Turn 2 restores at 1000 (inside page 15): page 15 is copied, 16-17 are new;
  // its states: its end (new), turn 1's end and guard (already written).
  h.Run(Cat({t1, src.Fresh(100)}));
  EXPECT_EQ(h.disk()->Stats().bytes_written, Pages(1000) * kPage + 2 * kBlob + 3 * kPage + kBlob);
  // Turn 1's file is gone; the disk holds turn 2's pages and three states.
  EXPECT_EQ(h.disk()->Stats().entries, 1);
  EXPECT_EQ(h.disk()->Stats().bytes, Pages(1100) * kPage + 3 * kBlob);
}

TEST(CacheTiers, DiskCapEvictsLeastRecentlyUsedWithAnchorsLast) {
  PageAllocator pages;
  MemoryDiskTier disk(3 * (Pages(640) * kPage + kBlob), &pages);
  TokenSource src;
  auto record = [&](EntryId id, bool anchor) {
    CountedSequence seq(&pages, kShape);
    seq.Append(src.Fresh(640));
    DiskRecord r{id, seq.tokens(), seq.Kv(), seq.State(), {}, anchor, false};
    return r;
  };
  const DiskRecord anchor = record(1, true);
  ASSERT_TRUE(disk.Put(anchor).ok());
  for (EntryId id = 2; id <= 4; ++id) ASSERT_TRUE(disk.Put(record(id, false)).ok());
  EXPECT_TRUE(disk.Contains(1)) << "the anchor is the oldest but goes last";
  EXPECT_FALSE(disk.Contains(2));
  EXPECT_TRUE(disk.Contains(3));
  EXPECT_TRUE(disk.Contains(4));
  // A recently loaded entry outlives an older one.
  ASSERT_TRUE(disk.Load(3, 640).ok());
  ASSERT_TRUE(disk.Put(record(5, false)).ok());
  EXPECT_TRUE(disk.Contains(3));
  EXPECT_FALSE(disk.Contains(4));
  // Anchors are not exempt: a file too large for anything else pushes them out too.
  MemoryDiskTier tight(Pages(640) * kPage + kBlob, &pages);
  ASSERT_TRUE(tight.Put(anchor).ok());
  ASSERT_TRUE(tight.Put(record(6, true)).ok());
  EXPECT_FALSE(tight.Contains(1));
  EXPECT_TRUE(tight.Contains(6));
  EXPECT_EQ(tight.Stats().evictions, 1);
}

// A load reads into new pages, as a real tier reads into new memory: RAM
// that still holds the stored pages charges the loaded ones apart, and
// writing the loaded pages back (the next turn's entry) stores nothing new.
TEST(CacheTiers, DiskLoadsIntoNewPagesAndWritingThemBackCostsNothing) {
  PageAllocator pages;
  MemoryDiskTier disk(int64_t{1} << 30, &pages);
  TokenSource src;
  CountedSequence turn1(&pages, kShape);
  turn1.Append(src.Fresh(640));  // 10 whole pages
  const DiskRecord stored{1, turn1.tokens(), turn1.Kv(), turn1.State(), {}, false, false};
  ASSERT_TRUE(disk.Put(stored).ok());
  Result<DiskLoad> loaded = disk.Load(1, 640);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ByteLedger ram;
  ram.AddKv(*stored.kv, false);
  EXPECT_EQ(ram.AddKv(*loaded->kv, false), Pages(640) * kPage);

  const Tokens tail = src.Fresh(100);
  RestorePoint rp;
  rp.entry = 1;
  rp.length = 640;
  rp.tier = Tier::kDisk;
  rp.kv = loaded->kv;
  rp.state = loaded->state;
  const Tokens prompt = Cat({turn1.tokens(), tail});
  ASSERT_TRUE(VerifyRestore(prompt, rp, true).ok());
  CountedSequence turn2(&pages, kShape);
  turn2.Admit(prompt, rp);
  turn2.Append(tail);
  const int64_t written = disk.Stats().bytes_written;
  ASSERT_TRUE(disk.Put({2, turn2.tokens(), turn2.Kv(), turn2.State(), {}, false, false}).ok());
  EXPECT_EQ(disk.Stats().bytes_written - written, 2 * kPage + kBlob);
  disk.Erase(1);
  EXPECT_EQ(disk.Stats().bytes, Pages(740) * kPage + kBlob);
}

TEST(CacheTiers, LeasedEntriesLeaveRamLast) {
  CacheOptions o;
  o.ram_budget_bytes = 20 * 1024;
  Harness h(o, kShape);
  TokenSource src;
  const Tokens x = src.Fresh(1000);
  h.Run(x);
  Harness::Open held = h.Start(Cat({x, src.Fresh(10)}));
  const EntryId source = held.lookup.restore.entry;
  for (int i = 0; i < 3; ++i) h.Run(src.Fresh(1000));
  EXPECT_NE(h.Info(source), nullptr) << "the lease pins its source";
  EXPECT_EQ(h.Info(source)->leases, 1);
  h.Finish(std::move(held));
  EXPECT_LE(h.cache().Stats().ram_bytes, o.ram_budget_bytes);
}

TEST(CacheTiers, DivergencePlanningSeesASharerHeldOnlyOnDisk) {
  // Issue 12, defect 1: a document held only on disk never produced a
  // divergence checkpoint, so every question about it started cold.
  CacheOptions o;
  o.ram_budget_bytes = Pages(5300) * kPage * 3 / 2;  // one such entry, not two
  Harness h(o, kShape, int64_t{1} << 30);
  TokenSource src;
  const Tokens doc = src.Fresh(5000);
  const Outcome a = h.Run(Cat({doc, src.Fresh(300)}));
  h.Run(src.Fresh(5300));  // unrelated traffic pushes the first question to disk
  ASSERT_EQ(h.Info(a.entry), nullptr);
  ASSERT_TRUE(h.disk()->Contains(a.entry));
  const Outcome b = h.Run(Cat({doc, src.Fresh(300)}));
  EXPECT_TRUE(std::find(b.captures.begin(), b.captures.end(), PlannedCapture{4998, PointKind::kDivergence}) != b.captures.end());
  const Outcome c = h.Run(Cat({doc, src.Fresh(300)}));
  EXPECT_EQ(c.restore.length, 5000 - kBoundarySlackTokens);
}

TEST(CacheTiers, AttentionOnlyLayoutsRestoreAnyPrefix) {
  const PayloadShape attention_only{64, kPage, 0};
  Harness h({}, attention_only);
  TokenSource src;
  const Tokens t = src.Fresh(1000);
  Outcome first = h.Run(t, {602, 0});  // the anchor 2 tokens before the prefix end
  EXPECT_EQ(first.captures, (std::vector<PlannedCapture>{{600, PointKind::kAnchor}}));
  Tokens edited = t;
  edited[700] = -1;
  Outcome o = h.Run(edited);
  EXPECT_EQ(o.restore.length, 700);
  EXPECT_EQ(o.restore.kind, PointKind::kPrefix);
  Outcome resend = h.Run(t);
  EXPECT_EQ(resend.restore.length, 999) << "min(l, m - 1)";
}

TEST(CacheTiers, MachineBudgetIsAFractionOfPhysicalMemory) {
  const int64_t whole = MachineRamBudgetBytes(1.0);
  ASSERT_GT(whole, 0);
  EXPECT_NEAR(static_cast<double>(MachineRamBudgetBytes(0.4)), 0.4 * static_cast<double>(whole), 4096.0);
}

}  // namespace
}  // namespace lineage::cache::testing
