// LineageCache from several threads at once (one mutex; disk loads outside
// it): conversations that share system prompts and fork, with every restore
// checked against the prompt and the invariants checked as they run.
#include <random>
#include <thread>

#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

TEST(CacheConcurrency, ThreadsShareOneCacheSafely) {
  CacheOptions o;
  o.ram_budget_bytes = 256 * 1024;
  Harness h(o, {16, 256, 1024}, 1 << 20);
  TokenSource shared_src(1);
  const std::vector<Tokens> systems{shared_src.Fresh(300), shared_src.Fresh(500)};
  constexpr int kThreads = 4;
  constexpr int kRequests = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      TokenSource src(1'000'000 * (t + 1));
      std::mt19937 rng(static_cast<unsigned>(t));
      Tokens prompt;
      const Tokens* sys = &systems[0];
      for (int i = 0; i < kRequests; ++i) {
        const int op = static_cast<int>(rng() % 10);
        if (prompt.empty() || op == 0 || prompt.size() > 3000) {
          sys = &systems[rng() % systems.size()];
          prompt = Cat({*sys, src.Fresh(20)});
        }
        if (op < 8) {
          Outcome out = h.Run(prompt, {Len(*sys) - 2, 0});
          if (op < 4 && out.entry != kNoEntry) (void)h.Extend(out, src.Fresh(30));
          prompt = Cat({prompt, src.Fresh(static_cast<int64_t>(rng() % 300) + 1)});
        } else {  // two forks of this conversation at once
          Harness::Open a = h.Start(Cat({prompt, src.Fresh(10)}));
          Harness::Open b = h.Start(Cat({prompt, src.Fresh(10)}));
          h.Finish(std::move(b));
          h.Finish(std::move(a));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  const CacheStats st = h.cache().Stats();
  EXPECT_EQ(st.live_leases, 0);
  EXPECT_LE(st.ram_bytes, o.ram_budget_bytes);
  EXPECT_GT(st.restored_tokens, 0);
  EXPECT_TRUE(h.cache().CheckInvariants().ok());
}

}  // namespace
}  // namespace lineage::cache::testing
