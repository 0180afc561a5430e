// Randomized agent-shaped traffic (new sessions on shared system prompts, next
// turns with verbatim or re-rendered replies, resends, edits, deletions in the
// middle, rolling windows, parallel forks, held leases) run against every
// policy configuration. After every request:
//  - the restore stands for exactly the prompt's tokens (VerifyRestore);
//  - the RAM restore point and the closest stored sequence equal those of the
//    naive per-entry scan (naive_restore.h) over the entries stored just
//    before the lookup;
//  - the budgets hold and the ledgers match a recount (CheckInvariants).
#include <cstdio>
#include <random>

#include "cache/naive_restore.h"
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

struct TraceConfig {
  const char* name;
  CacheOptions options;
  PayloadShape shape;
  int64_t disk_bytes;  // -1: no disk tier
};

void PrintTo(const TraceConfig& c, std::ostream* os) { *os << c.name; }

class RandomTrace : public ::testing::TestWithParam<TraceConfig> {};

std::vector<NaiveEntry> Snapshot(const std::vector<LineageCache::EntryInfo>& infos) {
  std::vector<NaiveEntry> out;
  for (const auto& e : infos) out.push_back({e.id, e.tokens, e.checkpoints, e.last_used});
  return out;
}

TEST_P(RandomTrace, EveryRestoreIsExactAndBudgetsHold) {
  const TraceConfig& cfg = GetParam();
  Harness h(cfg.options, cfg.shape, cfg.disk_bytes);
  const CacheOptions& o = h.cache().options();
  const bool whole_prefix_only = o.recurrent || o.mode == CacheMode::kExact;
  std::mt19937_64 rng(1234);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  TokenSource src;

  // Four system prompts; two differ by four tokens near their end.
  std::vector<Tokens> systems{src.Fresh(400), src.Fresh(300), src.Fresh(500), {}};
  systems[3] = systems[2];
  const Tokens four = src.Fresh(4);
  std::copy(four.begin(), four.end(), systems[3].begin() + 490);

  struct Session {
    size_t system = 0;
    Tokens prompt;
    int64_t last_boundary = 0;  // where the last user message starts
  };
  std::vector<Session> sessions;
  auto hints_for = [&](const Session& s) { return LookupHints{Len(systems[s.system]), 0}; };
  auto new_session = [&]() {
    Session s;
    s.system = static_cast<size_t>(uniform(0, 3));
    s.prompt = systems[s.system];
    s.last_boundary = Len(s.prompt);
    s.prompt = Cat({s.prompt, src.Fresh(uniform(5, 300))});
    return s;
  };
  auto next_turn = [&](Session s, const Tokens& reply) {
    s.prompt = Cat({s.prompt, reply});
    s.last_boundary = Len(s.prompt);
    s.prompt = Cat({s.prompt, src.Fresh(uniform(5, 300))});
    const int64_t sys_len = Len(systems[s.system]);
    if (Len(s.prompt) > 5000) {  // rolling window: drop the oldest turns after the system prompt
      Tokens kept(s.prompt.begin(), s.prompt.begin() + sys_len);
      kept.insert(kept.end(), s.prompt.begin() + sys_len + 2000, s.prompt.end());
      s.last_boundary -= 2000;
      s.prompt = std::move(kept);
    }
    return s;
  };

  auto checked_run = [&](const Tokens& prompt, LookupHints hints) {
    const RestoreSearch want = NaiveRestorePoint(Snapshot(h.cache().Entries()), prompt, whole_prefix_only);
    Harness::Open open = h.Start(prompt, hints);
    const LookupExplanation& ex = open.lookup.explanation;
    EXPECT_EQ(ex.best_ram.length, want.best.n) << ex.ToString();
    EXPECT_EQ(ex.closest_shared_tokens, want.shared_tokens);
    return open;
  };

  const int kRequests = 2500;
  std::vector<std::pair<Harness::Open, Session>> held;  // leases kept across requests
  for (int i = 0; i < kRequests; ++i) {
    const int64_t op = uniform(0, 99);
    if (sessions.size() < 3 || op < 10) {
      Session s = new_session();
      Outcome out = h.Finish(checked_run(s.prompt, hints_for(s)));
      sessions.push_back(s);
      if (sessions.size() > 12) sessions.erase(sessions.begin());
      continue;
    }
    const size_t k = static_cast<size_t>(uniform(0, static_cast<int64_t>(sessions.size()) - 1));
    Session& s = sessions[k];
    if (op < 50) {  // next turn; half the replies are repeated verbatim after extension
      Outcome out = h.Finish(checked_run(s.prompt, hints_for(s)));
      Tokens reply = src.Fresh(uniform(1, 400));
      if (uniform(0, 1) == 0 && out.entry != kNoEntry) {
        const Status st = h.Extend(out, reply);
        EXPECT_TRUE(st.ok() || st.code() == StatusCode::kNotFound) << st.ToString();
      }
      s = next_turn(s, reply);
    } else if (op < 58) {  // resend or regenerate
      h.Finish(checked_run(s.prompt, hints_for(s)));
    } else if (op < 68) {  // edit the last user message
      Tokens p(s.prompt.begin(), s.prompt.begin() + s.last_boundary + uniform(0, 3));
      s.prompt = Cat({p, src.Fresh(uniform(5, 300))});
      h.Finish(checked_run(s.prompt, hints_for(s)));
    } else if (op < 76) {  // the client deletes a block in the middle
      const int64_t sys_len = Len(systems[s.system]);
      if (s.last_boundary - sys_len > 200) {
        const int64_t from = uniform(sys_len, s.last_boundary - 150);
        Tokens p(s.prompt.begin(), s.prompt.begin() + from);
        p.insert(p.end(), s.prompt.begin() + from + 100, s.prompt.end());
        s.last_boundary -= 100;
        s.prompt = std::move(p);
      }
      h.Finish(checked_run(s.prompt, hints_for(s)));
    } else if (op < 86) {  // two parallel continuations of one conversation
      Session a = next_turn(s, src.Fresh(uniform(1, 50)));
      Session b = next_turn(s, src.Fresh(uniform(1, 50)));
      Harness::Open ra = checked_run(a.prompt, hints_for(a));
      Harness::Open rb = checked_run(b.prompt, hints_for(b));
      if (uniform(0, 1) == 1) {
        std::swap(ra, rb);
        std::swap(a, b);
      }
      h.Finish(std::move(ra));
      h.Finish(std::move(rb));
      s = a;
      sessions.push_back(b);
    } else if (op < 94 && held.size() < 3) {  // a slow request: its lease outlives others
      Session a = next_turn(s, src.Fresh(uniform(1, 50)));
      held.emplace_back(checked_run(a.prompt, hints_for(a)), a);
    } else if (!held.empty()) {
      h.Finish(std::move(held.front().first));
      sessions.push_back(held.front().second);
      held.erase(held.begin());
    }
    const CacheStats st = h.cache().Stats();
    if (st.live_leases == 0) {
      ASSERT_LE(st.ram_bytes, o.ram_budget_bytes) << "request " << i;
      ASSERT_LE(st.anchors, o.max_anchor_entries);
      ASSERT_LE(st.anchor_bytes, o.max_anchor_bytes);
    }
    if (cfg.disk_bytes >= 0) {
      ASSERT_LE(st.disk.bytes, cfg.disk_bytes);
    }
    if (sessions.size() > 12) sessions.erase(sessions.begin());
    if (::testing::Test::HasFailure()) FAIL() << "stopped at request " << i;
  }
  for (auto& [open, s] : held) h.Finish(std::move(open));
  const CacheStats st = h.cache().Stats();
  std::printf("%s: %lld lookups, %lld tokens restored (%lld from disk restores), %lld absorbed, %lld thinned, "
              "%lld evicted, peak RAM %lld B, disk written %lld B read %lld B\n",
              cfg.name, static_cast<long long>(st.lookups), static_cast<long long>(st.restored_tokens),
              static_cast<long long>(st.disk_restores), static_cast<long long>(st.absorptions),
              static_cast<long long>(st.thinned), static_cast<long long>(st.evictions),
              static_cast<long long>(st.peak_ram_bytes), static_cast<long long>(st.disk.bytes_written),
              static_cast<long long>(st.disk.bytes_read));
  EXPECT_EQ(st.live_leases, 0);
  EXPECT_LE(st.peak_ram_bytes, o.ram_budget_bytes);
  EXPECT_GT(st.restored_tokens, 0);
  EXPECT_GT(st.evictions, 0) << "the budget must bind for the trace to test it";
}

CacheOptions Small(CacheOptions o = {}) {
  o.ram_budget_bytes = 96 * 1024;
  o.max_anchor_entries = 3;
  o.max_anchor_bytes = 24 * 1024;
  return o;
}

const PayloadShape kHybrid{16, 256, 1024};
const PayloadShape kAttentionOnly{16, 256, 0};

TraceConfig Config(const char* name, CacheOptions o, PayloadShape shape = kHybrid, int64_t disk = 1 << 20) {
  return {name, o, shape, disk};
}

CacheOptions With(void (*edit)(CacheOptions&)) {
  CacheOptions o = Small();
  edit(o);
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    Policies, RandomTrace,
    ::testing::Values(Config("lineage", Small()), Config("lineage_no_disk", Small(), kHybrid, -1),
                      Config("spread", With([](CacheOptions& o) { o.thin_order = ThinOrder::kSpread; })),
                      Config("byte_sized", With([](CacheOptions& o) { o.thin_count = ThinCount::kBytes; })),
                      Config("periodic", With([](CacheOptions& o) { o.periodic_tokens = 512; })),
                      Config("attention_only", Small(), kAttentionOnly),
                      Config("exact", With([](CacheOptions& o) { o.mode = CacheMode::kExact; }))),
    [](const ::testing::TestParamInfo<TraceConfig>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lineage::cache::testing
