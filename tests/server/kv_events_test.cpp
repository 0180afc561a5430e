// KV events (docs/kv-events.md): a Python subscriber (python3-zmq,
// python3-msgpack) decodes every batch the publisher sends and rebuilds the
// set of restorable block-aligned prefixes; after every request of a
// replayed agent trace it must equal the cache's own view, computed here from
// the cache's entries without the publisher's code. The trace runs on the
// real policy with counted payloads under a RAM budget small enough to evict,
// so blocks are removed as well as stored.
//
// Skipped when python3 lacks zmq or msgpack, except under CI (CI=1).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <thread>

#include "cache/cache_harness.h"
#include "e2e_stack.h"
#include "server/kv_events/kv_events.h"
#include "server/kv_events/restorable_view.h"
#include "sim/trace.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::server {
namespace {

constexpr int64_t kBlockTokens = 32;

// The first Python that imports zmq and msgpack: Debian's python3-zmq and
// python3-msgpack live beside /usr/bin/python3, which another python3 on the
// PATH may hide.
std::string PythonWithZmq() {
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    if (std::system((std::string(python) + " -c 'import zmq, msgpack' >/dev/null 2>&1").c_str()) == 0) return python;
  }
  return "";
}

constexpr uint64_t kFnvStart = 0xcbf29ce484222325ull;

uint64_t Fnv1a64(const std::string& s, uint64_t h = kFnvStart) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// The cache's own view: every block-aligned prefix of every stored entry,
// as the subscriber prints it (LENGTH:FNV of the comma-joined ids).
std::string ExpectedLine(int64_t seq, const cache::LineageCache& cache) {
  std::set<std::string> prefixes;
  for (const cache::LineageCache::EntryInfo& e : cache.Entries()) {
    uint64_t state = kFnvStart;
    for (size_t i = 0; i < e.tokens.size(); ++i) {
      state = Fnv1a64((i > 0 ? "," : "") + std::to_string(static_cast<uint32_t>(e.tokens[i])), state);
      if ((i + 1) % kBlockTokens == 0) prefixes.insert(std::to_string(i + 1) + ":" + std::to_string(state));
    }
  }
  std::string joined;
  for (const std::string& p : prefixes) joined += (joined.empty() ? "" : "\n") + p;
  return std::to_string(seq) + " " + std::to_string(prefixes.size()) + " " + std::to_string(Fnv1a64(joined));
}

TEST(KvEvents, APythonSubscriberRebuildsTheRestorablePrefixesAfterEveryRequest) {
  const std::string python = PythonWithZmq();
  if (python.empty()) {
    if (std::getenv("CI")) FAIL() << "python3-zmq or python3-msgpack is missing (scripts/setup installs them)";
    GTEST_SKIP() << "python3 lacks zmq or msgpack";
  }
  Result<sim::Trace> trace = sim::GenerateTrace("coding", 11, 60);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();

  cache::CacheOptions co;
  co.ram_budget_bytes = 24 << 20;  // a few conversations: older entries leave RAM
  cache::PayloadShape shape;
  shape.page_bytes = 64 * 1024;
  cache::testing::Harness h(co, shape);

  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(testing::FreeLoopbackPort());
  KvEventOptions ko;
  ko.endpoint = endpoint;
  ko.block_tokens = kBlockTokens;
  auto publisher = KvEventPublisher::Create(ko, [&] { return RestorablePrefixes(h.cache(), nullptr); });
  ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();

  const int64_t num_requests = static_cast<int64_t>(trace->requests.size());
  const std::string cmd = python + " " LINEAGE_SOURCE_DIR "/tests/server/kv_events_subscriber.py --endpoint " +
                          endpoint + " --last " + std::to_string(num_requests);
  FILE* sub = ::popen(cmd.c_str(), "r");
  ASSERT_NE(sub, nullptr);
  char line[256];
  ASSERT_NE(std::fgets(line, sizeof line, sub), nullptr);
  ASSERT_EQ(std::string(line), "ready\n");
  // PUB drops what it sends before the subscription reaches it.
  std::this_thread::sleep_for(std::chrono::milliseconds(700));

  std::vector<std::string> expected;
  std::vector<uint32_t> ids;
  for (int64_t i = 0; i < num_requests; ++i) {
    const sim::Request& r = trace->requests[static_cast<size_t>(i)];
    ids.clear();
    sim::ExpandTokens(r.prompt, ids);
    const cache::Tokens prompt(ids.begin(), ids.end());
    cache::LookupHints hints;
    hints.anchor_tokens = std::min<int64_t>(r.anchor_tokens, static_cast<int64_t>(prompt.size()));
    hints.history_end_tokens = std::min<int64_t>(r.history_end_tokens, static_cast<int64_t>(prompt.size()));
    cache::testing::Outcome o = h.Run(prompt, hints);
    if (r.output.num_tokens > 0) {
      ids.clear();
      sim::ExpandTokens(std::span<const sim::Segment>(&r.output, 1), ids);
      (void)h.Extend(o, cache::Tokens(ids.begin(), ids.end()));
    }
    Result<int64_t> seq = (*publisher)->Publish(/*always=*/true);
    ASSERT_TRUE(seq.ok()) << seq.status().ToString();
    ASSERT_EQ(*seq, i + 1);
    expected.push_back(ExpectedLine(*seq, h.cache()));
  }

  std::vector<std::string> got;
  while (std::fgets(line, sizeof line, sub) != nullptr) {
    std::string l(line);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    got.push_back(l);
  }
  EXPECT_EQ(::pclose(sub), 0) << (got.empty() ? "" : got.back());
  ASSERT_EQ(got.size(), expected.size()) << "the subscriber missed batches";
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "after request " << i;

  const KvEventCounters c = (*publisher)->Counters();
  std::printf("  %lld requests: %lld blocks stored, %lld removed, %lld published at the end\n",
              static_cast<long long>(num_requests), static_cast<long long>(c.stored),
              static_cast<long long>(c.removed), static_cast<long long>(c.published_blocks));
  EXPECT_GT(c.removed, 0) << "the budget evicted nothing; the test would not see removals";
}

}  // namespace
}  // namespace lineage::server
