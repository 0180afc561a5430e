// Every engine worker flushes denormals (FTZ + DAZ) from its first task:
// decays in the chunked delta rule reach the denormal range on strongly
// decaying heads, where each multiply takes a microcode assist (~30x slower
// delta rule), so a worker left without the flags slows every prefill.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/engine_test_util.h"

namespace lineage::engine {
namespace {

TEST(DenormalFlush, EveryEngineWorkerFlushesDenormals) {
  constexpr unsigned kFtzDaz = 0x8040;
  for (int threads : {2, 3}) {
    auto engine = testing::MakeEngine(testing::TinyModel(model::Arch::kQwen3_5), threads);
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> worker_parts{0}, unflushed{0}, started{0};
    engine->pool().parallel_for(threads, [&](int64_t, int64_t, int) {
      started++;  // hold each part until all run, so every worker takes one
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < threads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      if (std::this_thread::get_id() == caller) return;
      worker_parts++;
      if ((_mm_getcsr() & kFtzDaz) != kFtzDaz) unflushed++;
    });
    EXPECT_EQ(worker_parts.load(), threads - 1);
    EXPECT_EQ(unflushed.load(), 0);
  }
}

}  // namespace
}  // namespace lineage::engine
