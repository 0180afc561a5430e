// Files the tier did not write, in its directory: a FIFO, a directory or a
// symlink loop named like an entry, page or state file, and 2 GiB sparse
// files whose headers lie about their size. Start-up, `lineage cache
// verify|ls|gc` and a restore each finish within a bound, name the file in
// one line, skip it, and read nothing of a file whose size its header
// contradicts. The bound is enforced by running each in a child process.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>

#include "cache/disk/keys.h"
#include "disk_child_util.h"
#include "disk_faulty_env.h"
#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBoundMs = 20'000;   // a hang is killed here
constexpr int64_t kPromptMs = 10'000;  // what "finishes promptly" asserts (a loaded 2-core machine)
constexpr uint64_t kTwoGiB = uint64_t{2} << 30;

Tokens Seq(int64_t n, TokenId first) {
  Tokens t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = first + static_cast<TokenId>(i);
  return t;
}

KeyChain Chain(const Tokens& t) { return KeyChain(TestCodec().fingerprint(), TestCodec().page_tokens(), t); }

void MakeFifoAt(const std::string& path) {
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path;
}

// Keeps the first `keep` bytes of `path` and makes it `bytes` long, sparse.
void MakeSparse(const std::string& path, uint64_t keep, uint64_t bytes) {
  fs::resize_file(path, keep);
  fs::resize_file(path, bytes);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(static_cast<uint64_t>(st.st_size), bytes);
  ASSERT_LT(st.st_blocks * 512, 1 << 20) << "the file system does not keep it sparse";
}

// Four entries: A's entry file becomes a FIFO, one of B's pages a FIFO, C's
// end state a symlink to itself; D stays whole.
struct HostileDir {
  std::string dir;
  Tokens a = Seq(20, 1), b = Seq(30, 500), c = Seq(12, 900), d = Seq(17, 2000);
  uint64_t a_file = 0, d_file = 0;
  std::string b_page, c_state;
};

HostileDir MakeHostileDir(const std::string& name) {
  HostileDir h;
  h.dir = FreshDir(name);
  {
    auto tier = OpenTier(h.dir, nullptr);
    EXPECT_TRUE(tier->Put(MakeRecord(1, h.a)).ok());
    EXPECT_TRUE(tier->Put(MakeRecord(2, h.b)).ok());
    EXPECT_TRUE(tier->Put(MakeRecord(3, h.c)).ok());
    EXPECT_TRUE(tier->Put(MakeRecord(4, h.d)).ok());
    tier->Flush();
    for (const StoredEntryInfo& e : tier->List()) {
      if (e.tokens == h.a) h.a_file = e.file_id;
      if (e.tokens == h.d) h.d_file = e.file_id;
    }
  }
  const DirLayout layout(h.dir);
  MakeFifoAt(layout.EntryPath(h.a_file));
  h.b_page = layout.PagePath(Chain(h.b).PageKey(1));
  EXPECT_TRUE(fs::exists(h.b_page));
  MakeFifoAt(h.b_page);
  h.c_state = layout.StatePath(Chain(h.c).StateKey(12));
  EXPECT_TRUE(fs::exists(h.c_state));
  fs::remove(h.c_state);
  fs::create_symlink(h.c_state, h.c_state);
  return h;
}

TEST(DiskHostileFiles, StartUpSkipsFifosDirectoriesAndSymlinkLoopsNamedLikeCacheFiles) {
  HostileDir h = MakeHostileDir("hostile_startup");
  fs::create_directories(DirLayout(h.dir).EntryPath(0x1234));  // a directory named like an entry file
  ASSERT_EQ(::mkfifo((h.dir + "/tmp/x.tmp").c_str(), 0644), 0);

  const ChildRun run = RunInChild(
      [&] {
        FileDiskTierOptions o;
        o.dir = h.dir;
        o.log = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
        auto tier = FileDiskTier::Open(o, std::make_shared<TestCodec>());
        return tier.ok() ? static_cast<int>((*tier)->Counters().restored_entries) : 100;
      },
      kBoundMs);
  ASSERT_TRUE(run.finished) << "start-up hung; output:\n" << run.output;
  EXPECT_LT(run.elapsed_ms, kPromptMs);
  EXPECT_EQ(run.exit_code, 1) << run.output;  // only D

  LogSink log;
  auto tier = OpenTier(h.dir, &log);
  const FileTierCounters c = tier->Counters();
  EXPECT_EQ(c.restored_entries, 1);
  EXPECT_EQ(c.skipped_damaged, 2 + 2) << "A's FIFO and the directory; B and C, whose blobs are unusable";
  EXPECT_EQ(log.Count(DirLayout::EntryName(h.a_file) + ": not a regular file (a FIFO)"), 1);
  EXPECT_EQ(log.Count(h.b_page + ": not a regular file (a FIFO)"), 1);
  EXPECT_EQ(log.Count(h.c_state + ": not a regular file (a symlink that cannot be followed"), 1);
  EXPECT_EQ(log.Count("not a regular file (a directory)"), 1);
  int64_t served = 0;
  ExpectEveryServedEntryVerifies(*tier, &served);
  EXPECT_EQ(served, 1);
  tier->Flush();
  EXPECT_TRUE(fs::exists(fs::symlink_status(h.dir + "/tmp/x.tmp"))) << "not a name the tier writes: never removed";
}

TEST(DiskHostileFiles, CacheVerifyLsAndGcNameFifosAndNeverBlock) {
  HostileDir h = MakeHostileDir("hostile_cli");
  const ChildRun verify = RunLineage({"cache", "verify", "--dir", h.dir}, kBoundMs);
  ASSERT_TRUE(verify.finished) << "cache verify hung; output:\n" << verify.output;
  EXPECT_LT(verify.elapsed_ms, kPromptMs);
  EXPECT_EQ(verify.exit_code, 2) << verify.output;
  EXPECT_NE(verify.output.find("BAD  corrupt: " + DirLayout(h.dir).EntryPath(h.a_file) + ": not a regular file (a FIFO)"),
            std::string::npos)
      << verify.output;
  EXPECT_NE(verify.output.find("BAD  corrupt: " + h.b_page + ": not a regular file (a FIFO)"), std::string::npos)
      << verify.output;
  EXPECT_NE(verify.output.find(h.c_state + ": not a regular file (a symlink"), std::string::npos) << verify.output;

  const ChildRun ls = RunLineage({"cache", "ls", "--dir", h.dir}, kBoundMs);
  ASSERT_TRUE(ls.finished) << "cache ls hung; output:\n" << ls.output;
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("skipping " + h.b_page + ": not a regular file (a FIFO)"), std::string::npos)
      << ls.output;
  EXPECT_NE(ls.output.find("3 entries"), std::string::npos) << ls.output;

  const ChildRun gc = RunLineage({"cache", "gc", "--dir", h.dir}, kBoundMs);
  ASSERT_TRUE(gc.finished) << "cache gc hung; output:\n" << gc.output;
  EXPECT_EQ(gc.exit_code, 0) << gc.output;
  EXPECT_NE(gc.output.find("removing " + h.b_page + ": not a regular file (a FIFO)"), std::string::npos)
      << gc.output;
  EXPECT_FALSE(fs::exists(fs::symlink_status(h.b_page)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(h.c_state)));
  const ChildRun again = RunLineage({"cache", "verify", "--dir", h.dir}, kBoundMs);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("1 entries checked, 0 bad"), std::string::npos) << again.output;
}

TEST(DiskHostileFiles, ARestoreMeetingAFifoFailsAtOnceAndForgetsTheEntry) {
  const std::string dir = FreshDir("hostile_load");
  const Tokens t = Seq(30, 7);
  // All in a child: if the read blocked, the child is killed at the bound.
  const ChildRun run = RunInChild(
      [&] {
        LogSink log;
        auto tier = OpenTier(dir, &log);
        if (!tier->Put(MakeRecord(1, t, {16})).ok()) return 10;
        tier->Flush();
        ::unlink(DirLayout(dir).PagePath(Chain(t).PageKey(1)).c_str());
        if (::mkfifo(DirLayout(dir).PagePath(Chain(t).PageKey(1)).c_str(), 0644) != 0) return 11;
        Result<DiskLoad> l = tier->Load(1, 30);
        std::printf("load: %s\n", l.ok() ? "ok" : l.status().ToString().c_str());
        for (const std::string& line : log.lines()) std::printf("log: %s\n", line.c_str());
        if (l.ok() || l.status().code() != StatusCode::kCorrupt) return 12;
        if (tier->Counters().corrupt_loads != 1) return 13;
        if (tier->Load(1, 16).ok()) return 14;  // forgotten, also below the FIFO
        return 0;
      },
      kBoundMs);
  ASSERT_TRUE(run.finished) << "the restore hung; output:\n" << run.output;
  EXPECT_LT(run.elapsed_ms, kPromptMs);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("not a regular file (a FIFO)"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("is not served"), std::string::npos) << run.output;
}

TEST(DiskHostileFiles, ARestorePastItsDeadlineGivesUpAndLaterOnesDoNotWaitBehindIt) {
  const std::string dir = FreshDir("hostile_deadline");
  const Tokens t = Seq(40, 3);
  {
    auto tier = OpenTier(dir, nullptr);
    ASSERT_TRUE(tier->Put(MakeRecord(1, t, {16})).ok());
    tier->Flush();
  }
  StallingReadEnv env;
  LogSink log;
  FileDiskTierOptions o;
  o.dir = dir;
  o.env = &env;
  o.load_deadline_ms = 300;
  o.load_ms_per_gib = 0;
  // Start-up reads entry files: let it through, then stall every read.
  env.Set(true);
  auto tier = OpenTierWith(o, &log);
  ASSERT_NE(tier, nullptr);
  env.Set(false);
  // A failed assertion must not leave the reader thread blocked for the destructor.
  struct ReopenAtExit {
    StallingReadEnv* env;
    ~ReopenAtExit() { env->Set(true); }
  } reopen{&env};

  auto t0 = std::chrono::steady_clock::now();
  Result<DiskLoad> late = tier->Load(tier->List()[0].id, 40);
  const auto late_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(late.ok());
  EXPECT_GE(late_ms, 300);
  EXPECT_LT(late_ms, 3000);
  EXPECT_EQ(tier->Counters().late_loads, 1);
  EXPECT_EQ(log.Count("took longer than 300 ms; prefilling instead"), 1);

  t0 = std::chrono::steady_clock::now();
  Result<DiskLoad> refused = tier->Load(tier->List()[0].id, 16);
  EXPECT_FALSE(refused.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250)) << "waited behind the late read";
  EXPECT_EQ(tier->Counters().refused_loads, 1);

  env.Set(true);  // the late read finishes; loads are served again
  Result<DiskLoad> again = Status(StatusCode::kIoError, "not tried");
  for (int i = 0; i < 100 && !again.ok(); ++i) {
    again = tier->Load(tier->List()[0].id, 40);
    if (!again.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(PayloadMatches(t, 40, again->kv, again->state));
  EXPECT_EQ(tier->Counters().corrupt_loads, 0) << "a late read is not damage";
}

// Counts the bytes read through it.
class CountingEnv final : public ForwardingFileEnv {
 public:
  Status ReadAt(const std::string& path, uint64_t offset, uint64_t n, uint8_t* out) override {
    bytes_ += static_cast<int64_t>(n);
    return base()->ReadAt(path, offset, n, out);
  }
  int64_t bytes() const { return bytes_; }

 private:
  std::atomic<int64_t> bytes_{0};
};

// D whole; A's entry file truncated to its header and made 2 GiB (sparse);
// a 2 GiB file of zeros named like an entry; one of B's pages likewise.
struct SparseDir {
  std::string dir;
  std::string a_entry, zeros_entry, b_page;
};

SparseDir MakeSparseDir(const std::string& name) {
  HostileDir h;
  SparseDir s;
  s.dir = FreshDir(name);
  uint64_t a_file = 0;
  {
    auto tier = OpenTier(s.dir, nullptr);
    EXPECT_TRUE(tier->Put(MakeRecord(1, h.a)).ok());
    EXPECT_TRUE(tier->Put(MakeRecord(2, h.b)).ok());
    EXPECT_TRUE(tier->Put(MakeRecord(4, h.d)).ok());
    tier->Flush();
    for (const StoredEntryInfo& e : tier->List()) {
      if (e.tokens == h.a) a_file = e.file_id;
    }
  }
  const DirLayout layout(s.dir);
  s.a_entry = layout.EntryPath(a_file);
  MakeSparse(s.a_entry, kEntryHeaderBytes, kTwoGiB);
  s.zeros_entry = layout.EntryPath(0xabcdef);
  { std::ofstream(s.zeros_entry) << ""; }
  MakeSparse(s.zeros_entry, 0, kTwoGiB);
  s.b_page = layout.PagePath(Chain(h.b).PageKey(0));
  MakeSparse(s.b_page, kBlobHeaderBytes, kTwoGiB);
  return s;
}

TEST(DiskHostileFiles, ASparse2GiBEntryFileIsRejectedAtStartUpWithoutBeingRead) {
  const SparseDir s = MakeSparseDir("sparse_startup");
  // The peak memory of a start-up in a child: reading the file would add 2 GiB.
  const ChildRun run = RunInChild(
      [&] {
        const int64_t before_kib = MaxRssKib();
        FileDiskTierOptions o;
        o.dir = s.dir;
        o.log = [](const std::string&) {};
        auto tier = FileDiskTier::Open(o, std::make_shared<TestCodec>());
        std::printf("rss_growth_kib %lld\n", static_cast<long long>(MaxRssKib() - before_kib));
        return tier.ok() ? static_cast<int>((*tier)->Counters().restored_entries) : 100;
      },
      kBoundMs);
  ASSERT_TRUE(run.finished);
  EXPECT_EQ(run.exit_code, 2) << run.output;  // B (its page is checked only on a restore) and D
  const size_t at = run.output.find("rss_growth_kib ");
  ASSERT_NE(at, std::string::npos) << run.output;
  const long long growth_kib = std::stoll(run.output.substr(at + 15));
  EXPECT_LT(growth_kib, 32 * 1024) << "start-up read the sparse file";
  std::printf("  start-up beside two 2 GiB sparse entry files: %lld ms, peak RSS +%lld KiB\n",
              static_cast<long long>(run.elapsed_ms), growth_kib);
  EXPECT_LT(run.elapsed_ms, kPromptMs);

  CountingEnv env;
  LogSink log;
  FileDiskTierOptions o;
  o.dir = s.dir;
  o.env = &env;
  auto tier = OpenTierWith(o, &log);
  EXPECT_EQ(tier->Counters().skipped_damaged, 2);
  EXPECT_EQ(log.Count(s.a_entry + ": " + std::to_string(kTwoGiB) + " bytes, the header implies"), 1);
  EXPECT_EQ(log.Count(s.zeros_entry + ": bad magic"), 1);
  EXPECT_LT(env.bytes(), 4096) << "entry headers and two small entry files";
  std::printf("  bytes read at start-up: %lld\n", static_cast<long long>(env.bytes()));
  // A restore of B meets the sparse page: its header is read, not its 2 GiB.
  const int64_t before = env.bytes();
  const int64_t before_kib = MaxRssKib();
  for (const StoredEntryInfo& e : tier->List()) {
    if (e.tokens.size() == 30) {
      EXPECT_EQ(tier->Load(e.id, 30).status().code(), StatusCode::kCorrupt);
    }
  }
  EXPECT_LT(env.bytes() - before, 4096);
  EXPECT_LT(MaxRssKib() - before_kib, 32 * 1024);
}

TEST(DiskHostileFiles, CacheVerifyRejectsSparse2GiBFilesWithoutReadingThem) {
  const SparseDir s = MakeSparseDir("sparse_verify");
  const ChildRun verify = RunLineage({"cache", "verify", "--dir", s.dir}, kBoundMs);
  ASSERT_TRUE(verify.finished) << verify.output;
  EXPECT_EQ(verify.exit_code, 2) << verify.output;
  EXPECT_NE(verify.output.find(s.a_entry + ": " + std::to_string(kTwoGiB) + " bytes, the header implies"),
            std::string::npos)
      << verify.output;
  EXPECT_NE(verify.output.find(s.zeros_entry + ": bad magic"), std::string::npos) << verify.output;
  EXPECT_NE(verify.output.find("fails its check"), std::string::npos) << "B's sparse page\n" << verify.output;
  EXPECT_LT(verify.max_rss_kib, 256 * 1024) << "verify read a 2 GiB file";
  std::printf("  cache verify beside 2 GiB sparse entry and page files: %lld ms, peak RSS %lld KiB\n",
              static_cast<long long>(verify.elapsed_ms), static_cast<long long>(verify.max_rss_kib));
  EXPECT_LT(verify.elapsed_ms, kPromptMs);
}

// A start-up step that blocks (here the chat template is a FIFO no one
// writes) must not make SIGTERM wait for the server to be ready.
TEST(DiskHostileFiles, ServeHonoursSigtermDuringStartUp) {
  const std::string dir = FreshDir("serve_sigterm");
  const std::string model = dir + "/tiny.gguf", fifo = dir + "/template.jinja";
  const ChildRun mk = RunLineage({"mkmodel", "--arch", "qwen3_5", "--shape", "tiny", "--format", "gguf", "--out", model},
                                 120'000);
  ASSERT_EQ(mk.exit_code, 0) << mk.output;
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const ChildRun serve = RunLineage({"serve", "-m", model, "--port", "0", "--chat-template-file", fifo, "--cache-dir",
                                     dir + "/cache"},
                                    kBoundMs, /*sigterm_after_ms=*/1500);
  ASSERT_TRUE(serve.finished) << "SIGTERM was ignored during start-up; output:\n" << serve.output;
  EXPECT_EQ(serve.exit_code, 128 + SIGTERM) << serve.output;
  EXPECT_NE(serve.output.find("during start-up"), std::string::npos) << serve.output;
}

}  // namespace
}  // namespace lineage::cache::disk::testing
