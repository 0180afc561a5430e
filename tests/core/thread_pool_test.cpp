#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace lineage {
namespace {

// Every index in [0, n) is visited exactly once, by ranges whose thread
// index is in [0, size) and distinct among concurrently running ranges.
void CheckCoverage(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::vector<std::atomic<int>> busy(static_cast<size_t>(pool.size()));
  std::atomic<int> bad_index{0};
  pool.parallel_for(n, [&](int64_t b, int64_t e, int tid) {
    if (tid < 0 || tid >= pool.size() || busy[tid].fetch_add(1) != 0) bad_index++;
    if (e - b < std::min(grain, n)) bad_index++;
    for (int64_t i = b; i < e; ++i) hits[i]++;
    if (tid >= 0 && tid < pool.size()) busy[tid].fetch_sub(1);
  }, grain);
  EXPECT_EQ(bad_index.load(), 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 3, 7, 64, 1000})
      for (int64_t grain : {1, 4, 100}) CheckCoverage(pool, n, grain);
  }
}

TEST(ThreadPool, ZeroWorkCallsNothing) {
  ThreadPool pool(2);
  int calls = 0;
  pool.parallel_for(0, [&](int64_t, int64_t, int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, UsesMoreThanOneThread) {
  ThreadPool pool(2);
  std::atomic<int> seen_mask{0};
  pool.parallel_for(2, [&](int64_t, int64_t, int tid) { seen_mask |= 1 << tid; });
  EXPECT_EQ(seen_mask.load(), 3);
}

TEST(ThreadPool, ManyBackToBackCallsAndWakeAfterSleeping) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  for (int rep = 0; rep < 20000; ++rep)
    pool.parallel_for(6, [&](int64_t b, int64_t e, int) { total += e - b; });
  EXPECT_EQ(total.load(), 20000 * 6);
  // Long enough for the workers to stop spinning and block.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CheckCoverage(pool, 100, 1);
}

TEST(ThreadPool, DestroysWhileWorkersSleepOrSpin) {
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(2);
    if (i % 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace
}  // namespace lineage
