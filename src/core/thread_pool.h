// ThreadPool: a fixed set of worker threads for data-parallel kernels.
//
// parallel_for splits [0, n) into contiguous ranges, runs them on the pool
// (the calling thread takes part) and returns when all are done. It is not
// reentrant: a task must not call parallel_for on the same pool. One pool is
// used by one caller at a time (the engine's step loop); it is not shared
// between concurrent callers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace lineage {

class ThreadPool {
 public:
  // num_threads: total threads including the caller; >= 1. `worker_init`,
  // when given, runs first thing on each worker thread, before any task (per
  // thread state such as floating-point modes: parts are claimed by whichever
  // thread is free, so no task is guaranteed to reach every thread).
  explicit ThreadPool(int num_threads, std::function<void()> worker_init = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;

  // fn(begin, end, thread_index) over disjoint ranges covering [0, n).
  // `grain` is the smallest range worth a thread.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn, int64_t grain = 1);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lineage
