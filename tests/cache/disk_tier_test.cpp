// FileDiskTier: lookup and load by the §3.1 rule, restarts, page sharing on
// disk (bytes checked), erase and garbage, the byte cap, and rejection of
// foreign and damaged files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

namespace fs = std::filesystem;

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

std::string OnlyFile(const std::string& dir, const std::string& ext) {
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    if (f.is_regular_file() && f.path().extension() == ext) return f.path().string();
  }
  return "";
}

void FlipByte(const std::string& path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.read(&c, 1);
  f.seekp(offset);
  c = static_cast<char>(c ^ 0x40);
  f.write(&c, 1);
}

TEST(FileDiskTier, ServesEntryEndsAndCheckpointsByTheRestoreRule) {
  const std::string dir = FreshDir("rule");
  LogSink log;
  auto tier = OpenTier(dir, &log);
  const Tokens t = Seq(30, 1);
  ASSERT_TRUE(tier->Put(MakeRecord(5, t, {12, 20})).ok());
  EXPECT_TRUE(tier->Contains(5));
  tier->Flush();

  auto p = tier->Lookup(Cat(t, Seq(4, 500)), 0, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->entry, 5u);
  EXPECT_EQ(p->length, 30);
  EXPECT_EQ(p->kind, PointKind::kEntryEnd);
  // An edit at 25: the checkpoint at 20 is the longest point below it.
  Tokens edited = t;
  edited[25] = 999;
  p = tier->Lookup(edited, 0, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->length, 20);
  EXPECT_EQ(p->kind, PointKind::kGuard);
  EXPECT_FALSE(tier->Lookup(edited, 20, true).has_value()) << "only a point longer than RAM's";
  EXPECT_FALSE(tier->Lookup(t, 0, true).has_value() && tier->Lookup(t, 0, true)->length == 30)
      << "a restore point is never the whole prompt";

  for (int64_t n : {12, 20, 30}) {
    Result<DiskLoad> l = tier->Load(5, n);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_TRUE(PayloadMatches(t, n, l->kv, l->state)) << n;
  }
  EXPECT_EQ(tier->Load(5, 25).status().code(), StatusCode::kNotFound) << "no state at 25";
  // Restoring at 20 reads pages 0..2 and one state, nothing else.
  const int64_t before = tier->Stats().bytes_read;
  ASSERT_TRUE(tier->Load(5, 20).ok());
  EXPECT_EQ(tier->Stats().bytes_read - before, 2 * PageFileBytes(8) + PageFileBytes(8) + StateFileBytes());
  EXPECT_EQ(tier->Stats().bytes, BytesUnder(dir));
  EXPECT_EQ(tier->Stats().bytes_written, BytesUnder(dir));
  EXPECT_TRUE(log.lines().empty());
}

TEST(FileDiskTier, ARestartServesThePreviousRunsEntries) {
  const std::string dir = FreshDir("restart");
  LogSink log;
  const Tokens a = Seq(40, 1), b = Seq(17, 1000), c = Cat(Seq(16, 1), Seq(9, 3000));
  {
    auto tier = OpenTier(dir, &log);
    ASSERT_TRUE(tier->Put(MakeRecord(1, a, {16, 33})).ok());
    ASSERT_TRUE(tier->Put(MakeRecord(2, b, {}, /*anchor=*/true)).ok());
    ASSERT_TRUE(tier->Put(MakeRecord(3, c)).ok());
  }  // the destructor finishes the writes
  auto tier = OpenTier(dir, &log);
  EXPECT_EQ(tier->Counters().restored_entries, 3);
  EXPECT_EQ(tier->Stats().entries, 3);
  EXPECT_EQ(tier->Stats().anchors, 1);
  int64_t served = 0;
  ExpectEveryServedEntryVerifies(*tier, &served);
  EXPECT_EQ(served, 3 + 2);
  auto p = tier->Lookup(Cat(a, Seq(3, 9)), 0, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_GE(p->entry, kRestoredIdBase) << "restored ids never collide with the policy's";
  EXPECT_EQ(p->length, 40);
  // The new run's writes land beside the old ones.
  ASSERT_TRUE(tier->Put(MakeRecord(1, Seq(12, 7000))).ok());
  tier->Flush();
  EXPECT_EQ(tier->Stats().entries, 4);
  EXPECT_EQ(FilesUnder(dir, ".ent"), 4);
  EXPECT_TRUE(log.lines().empty());
}

TEST(FileDiskTier, TwoSnapshotsOfALineageShareTheirPagesOnDisk) {
  const std::string dir = FreshDir("share");
  LogSink log;
  auto tier = OpenTier(dir, &log);
  const Tokens t1 = Seq(100, 1);                 // 12 full pages + 4 rows
  const Tokens t2 = Cat(t1, Seq(50, 2000));      // 18 full pages + 6 rows
  PageTable table(TestKvLayout());
  auto kv1 = AppendKv(table, t1);
  ASSERT_TRUE(tier->Put(MakeRecord(1, t1, {84}, false, kv1)).ok());
  tier->Flush();
  const int64_t turn1 = BytesUnder(dir);
  EXPECT_EQ(turn1, 12 * PageFileBytes(8) + PageFileBytes(4) + 2 * StateFileBytes() + EntryFileBytes(100, 13, 2));

  // Turn 2 continues the same page table (as the engine does) and absorbs turn 1.
  auto kv2 = AppendKv(table, t2);
  DiskRecord r2 = MakeRecord(2, t2, {84, 100}, false, kv2);
  r2.checkpoints[1].kind = PointKind::kFinal;
  const int64_t written_before = tier->Stats().bytes_written;
  ASSERT_TRUE(tier->Put(r2).ok());
  tier->Erase(1);
  tier->Flush();
  const int64_t turn2_written = tier->Stats().bytes_written - written_before;
  // New: page 12 now full, pages 13..17, the partial page 18, the state at 150.
  // The state at 100 is turn 1's end state under the same key: not written again.
  const int64_t new_blobs = 6 * PageFileBytes(8) + PageFileBytes(6) + StateFileBytes();
  EXPECT_EQ(turn2_written, new_blobs + EntryFileBytes(150, 19, 3));
  EXPECT_EQ(BytesUnder(dir), 18 * PageFileBytes(8) + PageFileBytes(6) + 3 * StateFileBytes() +
                                 EntryFileBytes(150, 19, 3))
      << "turn 1's partial page and entry file are gone; its full pages serve turn 2";
  EXPECT_EQ(FilesUnder(dir, ".kvp"), 19);
  EXPECT_EQ(tier->Stats().bytes, BytesUnder(dir));
  ExpectEveryServedEntryVerifies(*tier);

  // An anchor that is a prefix writes no page at all.
  const int64_t before_anchor = tier->Stats().bytes_written;
  ASSERT_TRUE(tier->Put(MakeRecord(3, Seq(40, 1), {}, true)).ok());
  tier->Flush();
  EXPECT_EQ(tier->Stats().bytes_written - before_anchor, StateFileBytes() + EntryFileBytes(40, 5, 1));
  // A whole snapshot (the off switch's design) shares nothing.
  DiskRecord whole = MakeRecord(4, t1);
  whole.whole_snapshot = true;
  const int64_t before_whole = tier->Stats().bytes_written;
  ASSERT_TRUE(tier->Put(whole).ok());
  tier->Flush();
  EXPECT_EQ(tier->Stats().bytes_written - before_whole,
            12 * PageFileBytes(8) + PageFileBytes(4) + StateFileBytes() + EntryFileBytes(100, 13, 1));
  ExpectEveryServedEntryVerifies(*tier);
}

TEST(FileDiskTier, EraseDeletesOnlyWhatNoOtherEntryReferences) {
  const std::string dir = FreshDir("erase");
  auto tier = OpenTier(dir, nullptr);
  const Tokens shared = Seq(32, 1);
  ASSERT_TRUE(tier->Put(MakeRecord(1, Cat(shared, Seq(20, 100)))).ok());
  ASSERT_TRUE(tier->Put(MakeRecord(2, Cat(shared, Seq(12, 200)))).ok());
  tier->Flush();
  EXPECT_EQ(FilesUnder(dir, ".kvp"), 4 + 3 + 2);
  tier->Erase(1);
  EXPECT_FALSE(tier->Contains(1));
  EXPECT_FALSE(tier->Lookup(Cat(Cat(shared, Seq(20, 100)), Seq(1, 5)), 0, true).has_value());
  tier->Flush();
  EXPECT_EQ(FilesUnder(dir, ".kvp"), 4 + 2);
  EXPECT_EQ(FilesUnder(dir, ".ent"), 1);
  ExpectEveryServedEntryVerifies(*tier);
  tier->Erase(2);
  tier->Flush();
  EXPECT_EQ(FilesUnder(dir, ".kvp") + FilesUnder(dir, ".rst") + FilesUnder(dir, ".ent"), 0);
  EXPECT_EQ(tier->Stats().bytes, 0);
}

TEST(FileDiskTier, ReplacingAnEntryKeepsOneFile) {
  const std::string dir = FreshDir("replace");
  auto tier = OpenTier(dir, nullptr);
  const Tokens t = Seq(20, 1);
  ASSERT_TRUE(tier->Put(MakeRecord(1, t)).ok());
  tier->Flush();
  const Tokens longer = Cat(t, Seq(10, 50));  // end of generation extends the entry
  ASSERT_TRUE(tier->Put(MakeRecord(1, longer, {20})).ok());
  tier->Flush();
  EXPECT_EQ(FilesUnder(dir, ".ent"), 1);
  auto p = tier->Lookup(Cat(longer, Seq(1, 9)), 0, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->length, 30);
  ExpectEveryServedEntryVerifies(*tier);
  EXPECT_EQ(tier->Stats().bytes, BytesUnder(dir));
}

TEST(FileDiskTier, CapEvictsTheLeastRecentlyUsedWithAnchorsLast) {
  const std::string dir = FreshDir("cap");
  const int64_t one = 3 * PageFileBytes(8) + StateFileBytes() + EntryFileBytes(24, 3, 1);
  auto tier = OpenTier(dir, nullptr, nullptr, 3 * one);
  ASSERT_TRUE(tier->Put(MakeRecord(1, Seq(24, 1000), {}, /*anchor=*/true)).ok());
  for (EntryId id = 2; id <= 4; ++id) ASSERT_TRUE(tier->Put(MakeRecord(id, Seq(24, 1000 * id))).ok());
  tier->Flush();
  EXPECT_TRUE(tier->Contains(1)) << "the anchor is the oldest but goes last";
  EXPECT_FALSE(tier->Contains(2));
  EXPECT_TRUE(tier->Contains(3));
  EXPECT_EQ(tier->Stats().evictions, 1);
  ASSERT_TRUE(tier->Load(3, 24).ok());  // 3 is now more recent than 4
  ASSERT_TRUE(tier->Put(MakeRecord(5, Seq(24, 5000))).ok());
  tier->Flush();
  EXPECT_TRUE(tier->Contains(3));
  EXPECT_FALSE(tier->Contains(4));
  EXPECT_LE(tier->Stats().bytes, 3 * one);
  EXPECT_EQ(tier->Stats().bytes, BytesUnder(dir));
  // Only anchors left to evict: they go too.
  for (EntryId id = 6; id <= 8; ++id) ASSERT_TRUE(tier->Put(MakeRecord(id, Seq(24, 1000 * id), {}, true)).ok());
  tier->Flush();
  EXPECT_FALSE(tier->Contains(1));
  EXPECT_EQ(tier->Stats().entries, 3);
}

TEST(FileDiskTier, ForeignAndDamagedEntriesAreSkippedAtStartUp) {
  const std::string dir = FreshDir("foreign");
  {
    auto tier = OpenTier(dir, nullptr);
    for (EntryId id = 1; id <= 4; ++id) ASSERT_TRUE(tier->Put(MakeRecord(id, Seq(20, 100 * id))).ok());
  }
  {
    LogSink log;
    auto other = OpenTier(dir, &log, std::make_shared<TestCodec>(/*model=*/2));
    EXPECT_EQ(other->Counters().skipped_foreign, 4);
    EXPECT_EQ(other->Stats().entries, 0);
    EXPECT_FALSE(other->Lookup(Seq(25, 100), 0, true).has_value());
    EXPECT_EQ(log.Count("another model"), 1) << "one line for all foreign files";
    other->Flush();
    EXPECT_EQ(FilesUnder(dir, ".kvp"), 4 * 3) << "another model's pages are left alone";
  }
  std::vector<std::string> ents;
  for (const auto& f : fs::directory_iterator(dir + "/entries")) ents.push_back(f.path().string());
  std::sort(ents.begin(), ents.end());
  FlipByte(ents[0], 20);                       // header
  FlipByte(ents[1], kEntryHeaderBytes + 5);    // body
  fs::resize_file(ents[2], fs::file_size(ents[2]) - 3);
  const std::string leftover = DirLayout(dir).TmpPath(DirLayout::EntryName(99), 0xabc);
  { std::ofstream(leftover) << "partial"; }
  { std::ofstream(dir + "/pages/" + fs::directory_iterator(dir + "/pages")->path().filename().string() + "/x.kvp") << "?"; }
  { std::ofstream(dir + "/pages/stray") << "not a directory"; }
  LogSink log;
  auto tier = OpenTier(dir, &log);
  EXPECT_EQ(tier->Counters().skipped_damaged, 3);
  EXPECT_EQ(tier->Stats().entries, 1);
  EXPECT_EQ(log.Count("skipping"), 3);
  EXPECT_FALSE(fs::exists(leftover));
  ExpectEveryServedEntryVerifies(*tier);
}

TEST(FileDiskTier, ADamagedPageOrStateIsNeverServed) {
  for (const char* ext : {".kvp", ".rst"}) {
    for (int mode = 0; mode < 3; ++mode) {
      const std::string dir = FreshDir("damage");
      LogSink log;
      auto tier = OpenTier(dir, &log);
      const Tokens t = Seq(6, 1);  // one page, one state
      ASSERT_TRUE(tier->Put(MakeRecord(1, t)).ok());
      tier->Flush();
      const std::string path = OnlyFile(dir, ext);
      if (mode == 0) FlipByte(path, 70);                      // payload
      if (mode == 1) FlipByte(path, 40);                      // header
      if (mode == 2) fs::resize_file(path, fs::file_size(path) - 1);
      Result<DiskLoad> l = tier->Load(1, 6);
      EXPECT_FALSE(l.ok()) << ext << " mode " << mode;
      EXPECT_EQ(l.status().code(), StatusCode::kCorrupt) << l.status().ToString();
      EXPECT_FALSE(tier->Contains(1)) << "a damaged entry is forgotten";
      EXPECT_FALSE(tier->Lookup(Cat(t, Seq(1, 9)), 0, true).has_value());
      EXPECT_EQ(tier->Counters().corrupt_loads, 1);
      EXPECT_EQ(log.Count("not served"), 1);
    }
  }
}

TEST(FileDiskTier, AttentionOnlyEntriesRestoreAnyPrefix) {
  const std::string dir = FreshDir("attn");
  auto tier = OpenTier(dir, nullptr, std::make_shared<TestCodec>(1, /*recurrent=*/false));
  const Tokens t = Seq(30, 1);
  DiskRecord r = MakeRecord(1, t);
  r.state = nullptr;
  ASSERT_TRUE(tier->Put(r).ok());
  tier->Flush();
  Tokens edited = t;
  edited[13] = 999;
  auto p = tier->Lookup(edited, 0, /*recurrent=*/false);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->length, 13);
  Result<DiskLoad> l = tier->Load(1, 13);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->state, nullptr);
  EXPECT_TRUE(PayloadMatches(t, 13, l->kv, nullptr, false));
  EXPECT_EQ(FilesUnder(dir, ".rst"), 0);
}

TEST(FileDiskTier, OneTierPerDirectory) {
  const std::string dir = FreshDir("lock");
  auto first = OpenTier(dir, nullptr);
  FileDiskTierOptions o;
  o.dir = dir;
  auto second = FileDiskTier::Open(o, std::make_shared<TestCodec>());
  EXPECT_FALSE(second.ok());
  first.reset();
  EXPECT_TRUE(FileDiskTier::Open(o, std::make_shared<TestCodec>()).ok());
}

}  // namespace
}  // namespace lineage::cache::disk::testing
