// MemoryTrimmer: trims only after a request ended, and a trim gives a
// worker arena's freed pages back to the system.
#include "server/http/memory_trim.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace lineage::server {
namespace {

using namespace std::chrono_literals;

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

TEST(MemoryTrimmer, TrimsOnlyAfterARequestEnded) {
  MemoryTrimmer trimmer(10ms);
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(trimmer.trims(), 0) << "nothing ended, nothing to trim";
  trimmer.NoteRequestEnded();
  trimmer.NoteRequestEnded();
  ASSERT_TRUE(WaitFor([&] { return trimmer.trims() >= 1; }, 2000ms));
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(trimmer.trims(), 1) << "two ends inside one period make one trim";
}

// What a large request body leaves behind: small blocks freed in a worker's
// arena with a few survivors pinning it, so the arena cannot shrink by
// itself. A trim returns the freed pages between the survivors.
TEST(MemoryTrimmer, ATrimReturnsAWorkerArenasFreedPages) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's allocator is not glibc's";
#endif
  std::vector<std::unique_ptr<char[]>> survivors;
  std::thread worker([&] {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 64 * 1024; ++i) {
      blocks.emplace_back(new char[2000]);
      std::fill_n(blocks.back().get(), 2000, static_cast<char>(i));
    }
    for (size_t i = 0; i < blocks.size(); i += 256) survivors.push_back(std::move(blocks[i]));
  });
  worker.join();  // ~128 MiB allocated, all but 1/256 freed
  int64_t before = ResidentBytes();
  MemoryTrimmer trimmer(10ms);
  trimmer.NoteRequestEnded();
  ASSERT_TRUE(WaitFor([&] { return trimmer.trims() >= 1; }, 2000ms));
  int64_t after = ResidentBytes();
  EXPECT_LT(after, before - (64 << 20)) << "before " << before << " after " << after;
}

}  // namespace
}  // namespace lineage::server
