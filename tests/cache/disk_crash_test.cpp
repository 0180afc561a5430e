// Crash safety: a child process writes to the disk tier — turns of several
// conversations, anchors, erasures, evictions under a small cap — and is
// killed with SIGKILL at a random moment. The next run must serve only
// entries that verify against their own tokens, never a partial file, and
// find no entry pointing at a missing blob. A few hundred trials on one
// directory, so every run also starts from the previous crash's leftovers.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "disk_tier_util.h"

namespace lineage::cache::disk::testing {
namespace {

constexpr int kTrials = 300;

// `opened_fd` gets one byte once the tier is open, before the first write.
[[noreturn]] void ChildWrites(const std::string& dir, uint32_t seed, int opened_fd) {
  FileDiskTierOptions o;
  o.dir = dir;
  o.cap_bytes = 48 * 1024;
  o.max_pending_writes = 4;
  o.log = [](const std::string&) {};
  auto tier = FileDiskTier::Open(o, std::make_shared<TestCodec>());
  if (!tier.ok()) _exit(3);
  if (::write(opened_fd, "o", 1) != 1) _exit(4);
  WriteConversationsUntilKilled(**tier, seed, /*conversations=*/5, /*flush_every=*/3);
}

TEST(DiskCrash, AWriterKilledAtAnyMomentNeverLeavesAServedFileDamaged) {
  const std::string dir = FreshDir("crash");
  std::mt19937 rng(20261130);
  int64_t served_total = 0, restarts_with_entries = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    int opened[2];
    ASSERT_EQ(::pipe(opened), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ChildWrites(dir, static_cast<uint32_t>(trial), opened[1]);
    ::close(opened[1]);
    // Even trials count the delay from the fork, so kills also land in the
    // start-up (the previous crash's sweep); odd trials from the open, so
    // they land among writes however slowly a loaded machine starts a child.
    if (trial % 2 == 1) {
      struct pollfd p {opened[0], POLLIN, 0};
      (void)::poll(&p, 1, 10'000);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 12000));
    ::kill(pid, SIGKILL);
    ::close(opened[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child stopped by itself: exit " << WEXITSTATUS(status);

    SCOPED_TRACE("trial " + std::to_string(trial));
    LogSink log;
    FileDiskTierOptions o;
    o.dir = dir;
    o.cap_bytes = 48 * 1024;
    auto tier = OpenTierWith(o, &log);
    ASSERT_NE(tier, nullptr);
    EXPECT_EQ(tier->Counters().skipped_damaged, 0) << (log.lines().empty() ? "" : log.lines()[0]);
    int64_t served = 0;
    ExpectEveryServedEntryVerifies(*tier, &served);
    served_total += served;
    restarts_with_entries += served > 0;
    EXPECT_EQ(tier->Counters().corrupt_loads, 0);
    tier->Flush();  // the orphan sweep
    if (HasFailure()) break;
  }
  std::printf("  %lld points verified after %d crashes (%lld restarts found entries)\n",
              static_cast<long long>(served_total), kTrials, static_cast<long long>(restarts_with_entries));
  EXPECT_GT(restarts_with_entries, kTrials / 3) << "the kills landed while entries were being written";
}

}  // namespace
}  // namespace lineage::cache::disk::testing
