#include "core/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
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

// Jobs live in a ring of slots indexed by generation; see Slot.
constexpr uint64_t kSlots = 64;
constexpr uint64_t kClosed = 0xffff;  // part field of a claim word: slot being rewritten

using Fn = std::function<void(int64_t, int64_t, int)>;

}  // namespace

// Dispatch: parallel_for writes the job into slot (generation % kSlots),
// bumps `generation` and wakes sleepers. Parts are not assigned to threads:
// every thread (the caller too) claims the next unclaimed part with a CAS on
// the slot's claim word (generation << 16 | next part) until none is left,
// and the caller then waits only for parts already running. So a worker the
// OS has not scheduled yet costs nothing: the caller takes its part. That is
// what keeps latency low on a machine shared with other processes (measured
// 33 us per call when the caller had to wait for every worker to check in,
// at load 13 on 2 cores; about 0.6 us on an idle machine either way).
//
// A late worker can hold a stale generation: its CAS fails because the claim
// word carries the full generation, and a slot being rewritten is first
// marked kClosed, so job fields read during the rewrite are never used.
struct ThreadPool::Impl {
  struct Slot {
    std::atomic<uint64_t> claim{kClosed};
    std::atomic<const Fn*> fn{nullptr};
    std::atomic<int64_t> n{0};
    std::atomic<int> num_parts{0};
    std::atomic<int> done{0};
  };

  int num_threads = 1;
  std::vector<std::thread> workers;

  alignas(64) std::atomic<uint64_t> generation{0};
  alignas(64) std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::array<Slot, kSlots> slots;

  // Runs unclaimed parts of job `gen` until none is left or the job is gone.
  void RunParts(uint64_t gen) {
    Slot& s = slots[gen % kSlots];
    uint64_t c = s.claim.load(std::memory_order_acquire);
    for (;;) {
      if ((c >> 16) != gen || (c & 0xffff) == kClosed) return;
      const Fn* fn = s.fn.load(std::memory_order_relaxed);
      const int64_t n = s.n.load(std::memory_order_relaxed);
      const int parts = s.num_parts.load(std::memory_order_relaxed);
      const int part = static_cast<int>(c & 0xffff);
      if (part >= parts) return;
      if (!s.claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        continue;  // c now holds the current word
      (*fn)(n * part / parts, n * (part + 1) / parts, part);
      s.done.fetch_add(1, std::memory_order_acq_rel);
      c = s.claim.load(std::memory_order_acquire);
    }
  }

  void WorkerLoop() {
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
      RunParts(g);
    }
  }

  // Wakes workers for generation `g` (already written to its slot).
  void Publish(uint64_t g) {
    generation.store(g, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lock(mu); }
      cv.notify_all();
    }
  }
};

ThreadPool::ThreadPool(int num_threads, std::function<void()> worker_init) : impl_(std::make_unique<Impl>()) {
  impl_->num_threads = std::max(1, num_threads);
  for (int i = 1; i < impl_->num_threads; ++i)
    impl_->workers.emplace_back([this, worker_init] {
      if (worker_init) worker_init();
      impl_->WorkerLoop();
    });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop.store(true, std::memory_order_seq_cst);
  }
  impl_->Publish(impl_->generation.load() + 1);
  impl_->cv.notify_all();
  for (std::thread& t : impl_->workers) t.join();
}

int ThreadPool::size() const { return impl_->num_threads; }

void ThreadPool::parallel_for(int64_t n, const Fn& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_parts = n / grain;  // every range at least `grain` long
  const int parts = static_cast<int>(std::min<int64_t>(impl_->num_threads, max_parts));
  if (parts <= 1) {
    fn(0, n, 0);
    return;
  }
  Impl& s = *impl_;
  const uint64_t g = s.generation.load(std::memory_order_relaxed) + 1;
  Impl::Slot& slot = s.slots[g % kSlots];
  slot.claim.store(g << 16 | kClosed, std::memory_order_seq_cst);  // before the fields change
  slot.fn.store(&fn, std::memory_order_relaxed);
  slot.n.store(n, std::memory_order_relaxed);
  slot.num_parts.store(parts, std::memory_order_relaxed);
  slot.done.store(0, std::memory_order_relaxed);
  slot.claim.store(g << 16, std::memory_order_release);
  s.Publish(g);
  s.RunParts(g);
  for (int i = 0; slot.done.load(std::memory_order_acquire) != parts; ++i) {
    if (i < 256) {
      _mm_pause();
    } else {
      std::this_thread::yield();  // a worker holding a part was descheduled
    }
  }
}

}  // namespace lineage
