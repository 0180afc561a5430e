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

TEST(ThreadPool, RunsPartsConcurrently) {
  // Each part waits for the other to start: only two threads running at
  // once get both past the wait (the caller alone would time out in part 0).
  ThreadPool pool(2);
  std::atomic<int> started{0}, met{0};
  pool.parallel_for(2, [&](int64_t, int64_t, int) {
    started++;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    if (started.load() == 2) met++;
  });
  EXPECT_EQ(met.load(), 2);
}

// worker_init runs on every worker before its first task, even on workers
// that never get a part of the first jobs (parts go to whichever thread is
// free, so a one-part-per-thread job cannot reach every thread for sure).
TEST(ThreadPool, WorkerInitRunsOnEveryWorkerBeforeAnyTask) {
  static thread_local bool initialised = false;
  std::atomic<int> inits{0};
  ThreadPool pool(3, [&] {
    initialised = true;
    inits++;
  });
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> worker_parts{0}, uninitialised{0};
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> started{0};
    pool.parallel_for(3, [&](int64_t, int64_t, int) {
      // Hold each part until all three run, so every worker takes one.
      started++;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      if (std::this_thread::get_id() == caller) return;
      worker_parts++;
      if (!initialised) uninitialised++;
    });
  }
  EXPECT_EQ(inits.load(), 2);
  EXPECT_EQ(worker_parts.load(), 40);
  EXPECT_EQ(uninitialised.load(), 0);
}

TEST(ThreadPool, UnevenPartsAndChangingSizes) {
  // Back-to-back jobs of different shapes: a worker that wakes late must
  // never run a part of a job that has already finished.
  ThreadPool pool(3);
  for (int rep = 0; rep < 3000; ++rep) {
    const int64_t n = 1 + rep % 37;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t b, int64_t e, int tid) {
      if (tid == 1) std::this_thread::yield();
      for (int64_t i = b; i < e; ++i) hits[i]++;
    }, 1 + rep % 3);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "rep " << rep;
  }
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
