// bench_lookup: restore-point lookup cost with many long entries (issue 4:
// 1,000 entries of 50k tokens sharing prefixes, median under 1 ms).
//
// Workload: 10 system prompts of 8k tokens behind a common 64-token header;
// under each, 20 conversations whose 5 branches (forks, regenerates,
// sub-agents) share the conversation up to a fork point; every entry is 50k
// tokens with 4 checkpoints. Queries, in equal shares: the next turn of a
// stored entry, an edit at a random point of one, a new session on a stored
// system prompt.
//
// Compared: the naive rule (one longest-common-prefix scan per entry,
// naive_restore.h) against the radix tree inside LineageCache::Lookup (which
// also plans captures and takes a lease). Both must agree on every restore
// length. Prints the machine, build and commit, a table, and one JSON line.
//
// Usage: bench_lookup [entries=1000] [tokens_per_entry=50000] [queries=1500]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/counted_payload.h"
#include "cache/lineage_cache.h"
#include "cache/naive_restore.h"
#include "bench_machine.h"

using lineage::bench::Shell;
using lineage::bench::CpuModel;

using namespace lineage::cache;
using Clock = std::chrono::steady_clock;

namespace {

struct Summary {
  double median_us, p95_us, max_us;
};

Summary Summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 95 / 100], us.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t num_entries = argc > 1 ? std::atoll(argv[1]) : 1000;
  const int64_t entry_tokens = argc > 2 ? std::atoll(argv[2]) : 50000;
  const int64_t num_queries = argc > 3 ? std::atoll(argv[3]) : 1500;
  constexpr int64_t kRoots = 10, kBranches = 5, kHeader = 64, kSystem = 8000;
  const int64_t convs_per_root = std::max<int64_t>(1, num_entries / (kRoots * kBranches));

  std::mt19937_64 rng(42);
  TokenId next = 1;
  auto fresh = [&](int64_t n) {
    Tokens t(static_cast<size_t>(n));
    for (auto& x : t) x = next++;
    return t;
  };
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };

  const Tokens header = fresh(kHeader);
  std::vector<Tokens> systems;
  std::vector<std::shared_ptr<const Tokens>> entries;
  for (int64_t r = 0; r < kRoots; ++r) {
    Tokens sys = header;
    const Tokens body = fresh(kSystem - kHeader);
    sys.insert(sys.end(), body.begin(), body.end());
    systems.push_back(sys);
    for (int64_t c = 0; c < convs_per_root; ++c) {
      Tokens trunk = sys;
      const Tokens conv = fresh(entry_tokens - kSystem);
      trunk.insert(trunk.end(), conv.begin(), conv.end());
      for (int64_t b = 0; b < kBranches; ++b) {
        Tokens e = trunk;
        const int64_t fork = uniform(kSystem + 1000, entry_tokens - 100);
        const Tokens tail = fresh(entry_tokens - fork);
        std::copy(tail.begin(), tail.end(), e.begin() + fork);
        entries.push_back(std::make_shared<const Tokens>(std::move(e)));
      }
    }
  }

  CacheOptions options;
  options.ram_budget_bytes = INT64_MAX / 2;
  options.max_anchor_bytes = INT64_MAX / 2;
  LineageCache cache(options);
  const PayloadShape shape{64, 1 << 20, 1 << 20};
  std::vector<NaiveEntry> naive;
  const auto build_start = Clock::now();
  for (const auto& tokens : entries) {
    const auto m = static_cast<int64_t>(tokens->size());
    std::vector<PageId> pages(static_cast<size_t>((m + 63) / 64));
    for (auto& p : pages) p = static_cast<PageId>(next++);  // distinct ids; sharing is not measured here
    CommitRequest req;
    req.prompt = *tokens;
    req.kv = std::make_shared<CountedKv>(tokens, m, std::move(pages), shape.page_tokens, shape.page_bytes);
    req.state = std::make_shared<CountedBlob>(shape.blob_bytes, m, 0);
    for (int k = 1; k <= 4; ++k) {
      const int64_t n = m * k / 5 - uniform(0, 500);
      req.captured.push_back({n, PointKind::kFinal, std::make_shared<CountedBlob>(shape.blob_bytes, n, 0)});
    }
    auto res = cache.Commit(std::move(req));
    if (!res.ok()) {
      std::fprintf(stderr, "commit failed: %s\n", res.status().ToString().c_str());
      return 1;
    }
  }
  const std::vector<LineageCache::EntryInfo> infos = cache.Entries();
  for (const auto& info : infos) naive.push_back({info.id, info.tokens, info.checkpoints, info.last_used});
  const double build_s = std::chrono::duration<double>(Clock::now() - build_start).count();

  std::vector<Tokens> queries;
  for (int64_t q = 0; q < num_queries; ++q) {
    const Tokens& e = *entries[static_cast<size_t>(uniform(0, static_cast<int64_t>(entries.size()) - 1))];
    Tokens p;
    switch (q % 3) {
      case 0: p = e; break;                                           // next turn
      case 1: p.assign(e.begin(), e.begin() + uniform(kSystem, entry_tokens - 1)); break;  // edit
      default: p = systems[static_cast<size_t>(uniform(0, kRoots - 1))]; break;  // new session
    }
    const Tokens tail = fresh(200);
    p.insert(p.end(), tail.begin(), tail.end());
    queries.push_back(std::move(p));
  }

  std::vector<double> naive_us, tree_us;
  int64_t mismatches = 0, restored = 0;
  for (const Tokens& p : queries) {
    auto t0 = Clock::now();
    const RestoreSearch want = NaiveRestorePoint(naive, p, true);
    auto t1 = Clock::now();
    auto got = cache.Lookup(p);
    auto t2 = Clock::now();
    naive_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    tree_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    if (!got.ok() || got->restore.length != want.best.n) ++mismatches;
    if (got.ok()) restored += got->restore.length;
  }
  const Summary sn = Summarize(naive_us), st = Summarize(tree_us);

  const std::string source = __FILE__;
  const std::string commit =
      Shell("git -C '" + source.substr(0, source.rfind('/')) + "' rev-parse --short HEAD 2>/dev/null");
#ifdef NDEBUG
  const char* build = "release";
#else
  const char* build = "debug";
#endif
  std::printf("bench_lookup  machine: %s, %u threads  build: %s  commit: %s\n", CpuModel().c_str(),
              std::thread::hardware_concurrency(), build, commit.c_str());
  std::printf("entries %zu x %lld tokens, %lld queries, built in %.1f s, mean restore %lld tokens, mismatches %lld\n",
              entries.size(), static_cast<long long>(entry_tokens), static_cast<long long>(num_queries), build_s,
              static_cast<long long>(restored / num_queries), static_cast<long long>(mismatches));
  std::printf("%-28s %12s %12s %12s\n", "method", "median_us", "p95_us", "max_us");
  std::printf("%-28s %12.1f %12.1f %12.1f\n", "naive LCP scan", sn.median_us, sn.p95_us, sn.max_us);
  std::printf("%-28s %12.1f %12.1f %12.1f\n", "radix tree (Lookup)", st.median_us, st.p95_us, st.max_us);
  std::printf("{\"bench\":\"lookup\",\"commit\":\"%s\",\"entries\":%zu,\"tokens_per_entry\":%lld,\"queries\":%lld,"
              "\"naive_median_us\":%.1f,\"naive_p95_us\":%.1f,\"tree_median_us\":%.1f,\"tree_p95_us\":%.1f,"
              "\"mismatches\":%lld}\n",
              commit.c_str(), entries.size(), static_cast<long long>(entry_tokens),
              static_cast<long long>(num_queries), sn.median_us, sn.p95_us, st.median_us, st.p95_us,
              static_cast<long long>(mismatches));
  return mismatches == 0 ? 0 : 1;
}
