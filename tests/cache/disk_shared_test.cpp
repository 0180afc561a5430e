// A disk directory shared by several processes (docs/disk-format.md, "Sharing
// a directory"): entries one writes are served by the others after a rescan,
// an entry another process deleted is "gone", not damage, and several writer
// processes killed at random moments never leave a damaged entry served,
// never delete a blob under a reader, and the collector holds the joint cap.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

constexpr int64_t kCapBytes = 64 * 1024;

FileDiskTierOptions Shared(const std::string& dir, int64_t cap_bytes = int64_t{1} << 40) {
  FileDiskTierOptions o;
  o.dir = dir;
  o.cap_bytes = cap_bytes;
  o.shared = true;
  o.rescan_ms = 20;
  return o;
}

TEST(SharedDisk, EachProcessServesWhatAnotherWrote) {
  const std::string dir = FreshDir("shared_serve");
  LogSink log;
  auto a = OpenTierWith(Shared(dir), &log);
  auto b = OpenTierWith(Shared(dir), &log);
  ASSERT_TRUE(a && b);
  const Tokens t1 = ConversationTurn(1, 3);
  ASSERT_TRUE(a->Put(MakeRecord(1, t1, {12})).ok());
  a->Flush();
  b->Refresh();
  std::optional<DiskPoint> p = b->Lookup(ConversationTurn(1, 4), 0, true);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->length, static_cast<int64_t>(t1.size()));
  Result<DiskLoad> l = b->Load(p->entry, p->length);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_TRUE(PayloadMatches(t1, p->length, l->kv, l->state));
  EXPECT_EQ(b->Counters().adopted_entries, 1);

  // B extends the conversation; its pages below t1's end are A's files.
  const Tokens t2 = ConversationTurn(1, 5);
  ASSERT_TRUE(b->Put(MakeRecord(7, t2, {static_cast<int64_t>(t1.size())})).ok());
  b->Erase(p->entry);  // absorbed, as the policy does
  b->Flush();
  a->Refresh();
  std::optional<DiskPoint> q = a->Lookup(ConversationTurn(1, 6), 0, true);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->length, static_cast<int64_t>(t2.size()));
  Result<DiskLoad> m = a->Load(q->entry, q->length);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(PayloadMatches(t2, q->length, m->kv, m->state));
  EXPECT_FALSE(a->Contains(1)) << "A forgot its entry once B deleted the absorbed file";
  EXPECT_EQ(FilesUnder(dir, ".ent"), 1);
  EXPECT_TRUE(log.lines().empty()) << log.lines()[0];
}

TEST(SharedDisk, SharedAndExclusiveOpenersExcludeEachOther) {
  const std::string dir = FreshDir("shared_lock");
  {
    auto a = OpenTierWith(Shared(dir), nullptr);
    auto b = OpenTierWith(Shared(dir), nullptr);
    EXPECT_TRUE(a && b);
    FileDiskTierOptions o;
    o.dir = dir;
    auto alone = FileDiskTier::Open(o, std::make_shared<TestCodec>());
    ASSERT_FALSE(alone.ok());
    EXPECT_NE(alone.status().message().find("in use by another process"), std::string::npos);
  }
  FileDiskTierOptions o;
  o.dir = dir;
  auto alone = FileDiskTier::Open(o, std::make_shared<TestCodec>());
  ASSERT_TRUE(alone.ok());
  auto shared = FileDiskTier::Open(Shared(dir), std::make_shared<TestCodec>());
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("does not share it"), std::string::npos);
}

TEST(SharedDisk, AnEntryAnotherProcessDeletedIsGoneNotDamaged) {
  const std::string dir = FreshDir("shared_gone");
  auto a = OpenTierWith(Shared(dir), nullptr);
  LogSink log;
  FileDiskTierOptions o = Shared(dir);
  o.rescan_ms = 60'000;  // B keeps its stale view
  auto b = OpenTierWith(o, &log);
  ASSERT_TRUE(a && b);
  const Tokens t = ConversationTurn(2, 4);
  ASSERT_TRUE(a->Put(MakeRecord(1, t)).ok());
  a->Flush();
  b->Refresh();
  std::optional<DiskPoint> p = b->Lookup(ConversationTurn(2, 5), 0, true);
  ASSERT_TRUE(p.has_value());
  a->Erase(1);
  a->Flush();
  Result<DiskLoad> l = b->Load(p->entry, p->length);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kNotFound) << l.status().ToString();
  EXPECT_EQ(b->Counters().gone_loads, 1);
  EXPECT_EQ(b->Counters().corrupt_loads, 0);
  EXPECT_FALSE(b->Lookup(ConversationTurn(2, 5), 0, true).has_value());
  // The blobs stay until a collector finds them unlisted.
  EXPECT_GT(FilesUnder(dir, ".kvp"), 0);
  b->Refresh(/*collect=*/true);
  EXPECT_EQ(FilesUnder(dir, ".kvp"), 0);
  EXPECT_EQ(FilesUnder(dir, ".rst"), 0);
}

TEST(SharedDisk, AWriterRewritesABlobAnotherProcessCollectedSinceItsLastRescan) {
  const std::string dir = FreshDir("shared_stale");
  auto a = OpenTierWith(Shared(dir), nullptr);
  FileDiskTierOptions o = Shared(dir);
  o.rescan_ms = 60'000;
  auto b = OpenTierWith(o, nullptr);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Put(MakeRecord(1, ConversationTurn(3, 2))).ok());
  a->Flush();
  b->Refresh();  // B now knows A's pages
  a->Erase(1);
  a->Refresh(/*collect=*/true);
  ASSERT_EQ(FilesUnder(dir, ".kvp"), 0);
  // B's view is stale; its entry shares A's first pages and must write them.
  const Tokens t = ConversationTurn(3, 4);
  ASSERT_TRUE(b->Put(MakeRecord(5, t)).ok());
  b->Flush();
  LogSink log;
  auto c = OpenTierWith(Shared(dir), &log);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Counters().restored_entries, 1);
  ExpectEveryServedEntryVerifies(*c);
}

[[noreturn]] void ChildWrites(const std::string& dir, uint32_t seed) {
  FileDiskTierOptions o = Shared(dir, kCapBytes);
  o.max_pending_writes = 4;
  o.log = [](const std::string&) {};
  auto tier = FileDiskTier::Open(o, std::make_shared<TestCodec>());
  if (!tier.ok()) _exit(3);
  // The same conversations in every writer, so they share blobs.
  WriteConversationsUntilKilled(**tier, seed, /*conversations=*/6, /*flush_every=*/2);
}

// The reader: restores whatever it sees while the writers run; every restore
// either verifies against its own tokens or finds its entry gone.
struct ReaderTally {
  int64_t verified = 0;
  int64_t gone = 0;
  int64_t other_failures = 0;
  std::string first_failure;
};

void ReadWhileWriting(FileDiskTier& reader, int64_t for_ms, std::mt19937& rng, ReaderTally* tally) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(for_ms);
  while (std::chrono::steady_clock::now() < end) {
    const int conv = static_cast<int>(rng() % 6);
    const Tokens prompt = ConversationTurn(conv, 6);
    std::optional<DiskPoint> p = reader.Lookup(prompt, 0, true);
    if (!p) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    Result<DiskLoad> l = reader.Load(p->entry, p->length);
    if (l.ok()) {
      const bool good = PayloadMatches(Tokens(prompt.begin(), prompt.begin() + p->length), p->length, l->kv, l->state);
      good ? ++tally->verified : ++tally->other_failures;
      if (!good && tally->first_failure.empty()) tally->first_failure = "payload differs";
    } else if (l.status().code() == StatusCode::kNotFound && l.status().message().find("gone") != std::string::npos) {
      ++tally->gone;
    } else {
      ++tally->other_failures;
      if (tally->first_failure.empty()) tally->first_failure = l.status().ToString();
    }
  }
}

TEST(SharedDisk, WritersKilledAtRandomMomentsNeverDamageWhatReadersServe) {
  constexpr int kTrials = 40;
  constexpr int kWriters = 3;
  const std::string dir = FreshDir("shared_crash");
  std::mt19937 rng(20261201);
  ReaderTally tally;
  int64_t collections = 0, adopted = 0, max_bytes_after_collect = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::vector<pid_t> writers;
    for (int w = 0; w < kWriters; ++w) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) ChildWrites(dir, static_cast<uint32_t>(trial * kWriters + w));
      writers.push_back(pid);
    }
    {
      LogSink log;
      auto reader = OpenTierWith(Shared(dir, kCapBytes), &log);
      ASSERT_NE(reader, nullptr);
      // Kill the writers one at a time at random moments while reading.
      for (pid_t pid : writers) {
        ReadWhileWriting(*reader, 5 + static_cast<int64_t>(rng() % 60), rng, &tally);
        ::kill(pid, SIGKILL);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFSIGNALED(status)) << "a writer stopped by itself: exit " << WEXITSTATUS(status);
      }
      EXPECT_EQ(reader->Counters().corrupt_loads, 0) << (log.lines().empty() ? "" : log.lines()[0]);
      EXPECT_EQ(tally.other_failures, 0) << tally.first_failure;
      adopted += reader->Counters().adopted_entries;
    }
    // A server starting after the crashes: nothing damaged, the cap held once collected.
    LogSink log;
    auto after = OpenTierWith(Shared(dir, kCapBytes), &log);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->Counters().skipped_damaged, 0) << (log.lines().empty() ? "" : log.lines()[0]);
    after->Refresh(/*collect=*/true);
    ASSERT_GT(after->Counters().collections, 0) << "no reader or writer is left to defer the collection";
    ++collections;
    const int64_t bytes = BytesUnder(dir);
    max_bytes_after_collect = std::max(max_bytes_after_collect, bytes);
    EXPECT_LE(bytes, kCapBytes);
    EXPECT_EQ(FilesUnder(dir, ".tmp"), 0);
    ExpectEveryServedEntryVerifies(*after);
    EXPECT_EQ(after->Counters().corrupt_loads, 0);
    if (HasFailure()) break;
  }
  std::printf("  %d trials x %d writers: %lld restores verified, %lld found their entry gone, %lld entries adopted, "
              "largest directory after a collection %lld bytes (cap %lld)\n",
              kTrials, kWriters, static_cast<long long>(tally.verified), static_cast<long long>(tally.gone),
              static_cast<long long>(adopted), static_cast<long long>(max_bytes_after_collect),
              static_cast<long long>(kCapBytes));
  EXPECT_GT(tally.verified, kTrials) << "the reader restored entries the writers wrote";
  EXPECT_GT(adopted, 0);
}

}  // namespace
}  // namespace lineage::cache::disk::testing
