#include "core/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace lineage {
namespace {

// How long an idle worker spins before it blocks. parallel_for comes back
// every few microseconds during decode, so spinning through such gaps avoids
// a futex wake (tens of microseconds) per call; 200 us bounds the cost when idle.
constexpr auto kSpinFor = std::chrono::microseconds(200);

}  // namespace

// Workers wait for `generation` to change, run their part of the published
// job and decrement `pending`. A worker that stops spinning registers in
// `sleepers` and waits on `cv`; the publisher takes the mutex only when
// someone sleeps. Both sides use seq_cst for generation/sleepers so that at
// least one of them sees the other's write (no lost wake-up).
struct ThreadPool::Impl {
  int num_threads = 1;
  std::vector<std::thread> workers;

  alignas(64) std::atomic<uint64_t> generation{0};
  alignas(64) std::atomic<int> pending{0};
  alignas(64) std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;

  // The published job; written before generation is bumped.
  const std::function<void(int64_t, int64_t, int)>* fn = nullptr;
  int64_t n = 0;
  int num_parts = 0;

  void RunPart(int part) const {
    if (part >= num_parts) return;
    int64_t begin = n * part / num_parts;
    int64_t end = n * (part + 1) / num_parts;
    (*fn)(begin, end, part);
  }

  void WorkerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g = generation.load(std::memory_order_acquire);
      if (g == seen) {
        auto deadline = std::chrono::steady_clock::now() + kSpinFor;
        for (int i = 0; g == seen; ++i) {
          _mm_pause();
          g = generation.load(std::memory_order_acquire);
          if ((i & 255) == 255) {
            if (std::chrono::steady_clock::now() > deadline) break;
            // When threads outnumber free cores, a pure spin would keep the
            // thread that has work from running until the time slice ends.
            std::this_thread::yield();
          }
        }
      }
      if (g == seen) {
        std::unique_lock<std::mutex> lock(mu);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        while ((g = generation.load(std::memory_order_seq_cst)) == seen &&
               !stop.load(std::memory_order_relaxed))
          cv.wait(lock);
        sleepers.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stop.load(std::memory_order_acquire)) return;
      seen = g;
      RunPart(index);
      pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void Publish() {
    generation.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lock(mu); }
      cv.notify_all();
    }
  }
};

ThreadPool::ThreadPool(int num_threads) : impl_(std::make_unique<Impl>()) {
  impl_->num_threads = std::max(1, num_threads);
  for (int i = 1; i < impl_->num_threads; ++i)
    impl_->workers.emplace_back([this, i] { impl_->WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop.store(true, std::memory_order_seq_cst);
  }
  impl_->Publish();
  impl_->cv.notify_all();
  for (std::thread& t : impl_->workers) t.join();
}

int ThreadPool::size() const { return impl_->num_threads; }

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                              int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_parts = n / grain;  // every range at least `grain` long
  int parts = static_cast<int>(std::min<int64_t>(impl_->num_threads, max_parts));
  if (parts <= 1) {
    fn(0, n, 0);
    return;
  }
  Impl& s = *impl_;
  s.fn = &fn;
  s.n = n;
  s.num_parts = parts;
  // Every worker acknowledges every generation, including those with no part.
  s.pending.store(s.num_threads - 1, std::memory_order_relaxed);
  s.Publish();
  s.RunPart(0);
  for (int i = 0; s.pending.load(std::memory_order_acquire) != 0; ++i) {
    if (i < 256) {
      _mm_pause();
    } else {
      std::this_thread::yield();  // a worker was descheduled; let it run
    }
  }
}

}  // namespace lineage
