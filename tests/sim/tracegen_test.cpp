#include <gtest/gtest.h>

#include <map>

#include "trace/trace_io.h"
#include "sim/tracegen/scenarios.h"

namespace lineage::sim {
namespace {

Trace Gen(const std::string& scenario, uint64_t seed = 5, int64_t n = 400) {
  Result<Trace> t = GenerateTrace(scenario, seed, n);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TEST(Tracegen, EveryRequestSaysWhenItsReplyEndsAndTheSessionWaitsForIt) {
  for (const std::string& s : ScenarioNames()) {
    Trace t = Gen(s);
    std::map<uint32_t, int64_t> session_end_ms;
    int64_t overlapping = 0;
    for (const Request& r : t.requests) {
      ASSERT_GE(r.end_ms, r.arrival_ms) << s;
      auto it = session_end_ms.find(r.session);
      if (it != session_end_ms.end() && r.arrival_ms < it->second) ++overlapping;
      session_end_ms[r.session] = std::max(session_end_ms[r.session], r.end_ms);
    }
    // Only deliberate overlaps (a retry racing its original, a regenerate
    // sent before the reply ended) start before the session's last reply ends.
    EXPECT_LE(overlapping * 10, static_cast<int64_t>(t.requests.size())) << s;
  }
}

TEST(Tracegen, EveryScenarioIsDeterministicSortedAndSized) {
  for (const std::string& s : ScenarioNames()) {
    Trace a = Gen(s), b = Gen(s), c = Gen(s, 6);
    EXPECT_EQ(FormatNative(a), FormatNative(b)) << s;
    EXPECT_NE(FormatNative(a), FormatNative(c)) << s;
    EXPECT_EQ(a.requests.size(), 400u) << s;
    for (size_t i = 1; i < a.requests.size(); ++i) ASSERT_LE(a.requests[i - 1].arrival_ms, a.requests[i].arrival_ms);
    Result<Trace> back = ParseTrace(FormatNative(a), s);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
  }
  EXPECT_FALSE(GenerateTrace("nope", 1, 10).ok());
  EXPECT_FALSE(GenerateTrace("mixed", 1, 0).ok());
}

// Consecutive requests of each session, in order.
std::map<uint32_t, std::vector<const Request*>> BySession(const Trace& t) {
  std::map<uint32_t, std::vector<const Request*>> out;
  for (const Request& r : t.requests) out[r.session].push_back(&r);
  return out;
}

TEST(Tracegen, PacingForASlowerShapeSpacesTurnsFurther) {
  Trace fast = GenerateTrace("coding", 5, 300).value();
  Trace slow = GenerateTrace("coding", 5, 300, "qwen3-next-80b").value();
  // Same sessions and prompts; a session's turns are further apart.
  auto span_of_first_session = [](const Trace& t) {
    int64_t first = -1, last = -1;
    for (const Request& r : t.requests)
      if (r.session == t.requests[0].session) {
        if (first < 0) first = r.arrival_ms;
        last = r.arrival_ms;
      }
    return last - first;
  };
  EXPECT_GT(span_of_first_session(slow), 2 * span_of_first_session(fast));
  EXPECT_FALSE(GenerateTrace("coding", 5, 10, "no-such-shape").ok());
}

TEST(Tracegen, AssistantsHaveLongPrefixesAndShortQuestions) {
  Trace t = Gen("assistants");
  for (const Request& r : t.requests) {
    EXPECT_GE(r.anchor_tokens, 9000);
    EXPECT_LE(r.anchor_tokens, 12000);
  }
  // The first request of every session is the prefix plus a 7-40 token question.
  for (auto& [s, reqs] : BySession(t)) {
    EXPECT_GE(reqs[0]->num_prompt_tokens - reqs[0]->anchor_tokens, 7);
    EXPECT_LE(reqs[0]->num_prompt_tokens - reqs[0]->anchor_tokens, 40);
  }
}

TEST(Tracegen, CodingHasParallelSubAgentsWithTheirOwnToolLists) {
  Trace t = Gen("coding", 5, 1500);
  bool found = false;
  for (size_t i = 0; i + 1 < t.requests.size() && !found; ++i) {
    const Request &a = t.requests[i], &b = t.requests[i + 1];
    if (a.arrival_ms != b.arrival_ms || a.session == b.session) continue;
    int64_t lcp = Lcp(a.prompt, b.prompt);
    // Different agent types: they share the system text and part at its
    // end, where their tool lists begin.
    if (lcp == a.system_end_tokens && lcp == b.system_end_tokens && lcp > 0 && lcp < a.anchor_tokens) found = true;
  }
  EXPECT_TRUE(found);
  for (const Request& r : t.requests) {
    EXPECT_EQ(r.system_end_tokens, 2500);
    EXPECT_GT(r.anchor_tokens, r.system_end_tokens);
  }
  int64_t longest = 0;
  for (const Request& r : t.requests) longest = std::max(longest, r.num_prompt_tokens);
  EXPECT_GT(longest, 50'000);
}

TEST(Tracegen, RetriesResendAndEdit) {
  Trace t = Gen("retries");
  int resends = 0, edits = 0;
  for (auto& [s, reqs] : BySession(t)) {
    for (size_t i = 1; i < reqs.size(); ++i) {
      const Request &p = *reqs[i - 1], &q = *reqs[i];
      int64_t lcp = Lcp(p.prompt, q.prompt);
      if (lcp == p.num_prompt_tokens && lcp == q.num_prompt_tokens) ++resends;
      if (p.prompt.size() == q.prompt.size() && lcp == NumTokens(std::span(p.prompt).first(p.prompt.size() - 1))) ++edits;
    }
  }
  EXPECT_GT(resends, 5);
  EXPECT_GT(edits, 5);
}

TEST(Tracegen, ClockPromptsDivergeAtTheMinute) {
  Trace t = Gen("clock");
  int diverging = 0;
  for (size_t i = 1; i < t.requests.size(); ++i) {
    const Request &a = t.requests[i - 1], &b = t.requests[i];
    if (a.arrival_ms / 60000 != b.arrival_ms / 60000) diverging += Lcp(a.prompt, b.prompt) == 1500;
  }
  EXPECT_GT(diverging, 100);
}

TEST(Tracegen, RollingWindowDropsTheOldestTurns) {
  Trace t = Gen("window");
  int drops = 0;
  for (auto& [s, reqs] : BySession(t)) {
    for (size_t i = 1; i < reqs.size(); ++i) {
      EXPECT_LE(reqs[i]->num_prompt_tokens, 34'000);
      int64_t lcp = Lcp(reqs[i - 1]->prompt, reqs[i]->prompt);
      if (lcp == 4000 && reqs[i]->num_prompt_tokens > 20'000) ++drops;  // only the system prompt survives
    }
  }
  EXPECT_GT(drops, 20);
}

TEST(Tracegen, MiddleDeleteShrinksTheContextAfterThePrefix) {
  Trace t = Gen("middle-delete", 5, 1200);
  int deletions = 0;
  for (auto& [s, reqs] : BySession(t)) {
    for (size_t i = 1; i < reqs.size(); ++i) {
      const Request &p = *reqs[i - 1], &q = *reqs[i];
      int64_t lcp = Lcp(p.prompt, q.prompt);
      if (q.num_prompt_tokens < p.num_prompt_tokens && lcp > p.anchor_tokens && lcp < p.num_prompt_tokens / 2) ++deletions;
    }
  }
  EXPECT_GT(deletions, 3);
}

TEST(Tracegen, FreshSessionsSpreadOverTheDay) {
  Trace t = Gen("fresh");
  EXPECT_GT(t.requests.back().arrival_ms - t.requests.front().arrival_ms, 20LL * 3600 * 1000);
  EXPECT_GT(t.sessions.size(), 50u);
}

// The hint-less Mooncake-shaped scenario: what a replayed Mooncake trace
// looks like (512-token prefix-chained blocks, no anchor, no history end),
// with many questions over a few long shared documents from many sessions
// at once, at a production-like arrival rate.
TEST(Tracegen, MooncakeHasNoHintsAndSharesWholeBlocksAcrossManyConcurrentSessions) {
  Trace t = Gen("mooncake", 5, 1500);
  int64_t cross_session_long_shares = 0;
  std::map<uint32_t, int64_t> session_end_ms;
  int64_t max_running_sessions = 0;
  for (size_t i = 0; i < t.requests.size(); ++i) {
    const Request& r = t.requests[i];
    EXPECT_EQ(r.anchor_tokens, 0);
    EXPECT_EQ(r.history_end_tokens, 0);
    for (size_t k = 0; k + 1 < r.prompt.size(); ++k) ASSERT_EQ(r.prompt[k].num_tokens, 512u) << "request " << i;
    ASSERT_LE(r.prompt.back().num_tokens, 512u);
    // Sessions whose reply had not ended when this one arrived.
    int64_t running = 0;
    for (auto& [s, end] : session_end_ms) running += end > r.arrival_ms;
    max_running_sessions = std::max(max_running_sessions, running);
    session_end_ms[r.session] = std::max(session_end_ms[r.session], r.end_ms);
    // Shares of a whole-block prefix of at least 6,000 tokens with an
    // earlier request of another session (a document another user asked about).
    for (size_t j = i >= 40 ? i - 40 : 0; j < i; ++j) {
      const Request& e = t.requests[j];
      if (e.session == r.session) continue;
      const int64_t l = Lcp(e.prompt, r.prompt);
      if (l >= 6000) {
        EXPECT_EQ(l % 512, 0);
        ++cross_session_long_shares;
        break;
      }
    }
  }
  EXPECT_GT(cross_session_long_shares, 300);
  EXPECT_GE(max_running_sessions, 5);
  // Mooncake's traces run at a few requests a second.
  const double seconds = static_cast<double>(t.requests.back().arrival_ms - t.requests.front().arrival_ms) / 1000.0;
  const double per_s = static_cast<double>(t.requests.size()) / seconds;
  EXPECT_GT(per_s, 0.5);
  EXPECT_LT(per_s, 10.0);
  // Prompts are long: Mooncake's averages are 8-12k tokens.
  int64_t total = 0;
  for (const Request& r : t.requests) total += r.num_prompt_tokens;
  EXPECT_GT(total / static_cast<int64_t>(t.requests.size()), 6000);
  // The same trace through the Mooncake format reads back with the same prefixes.
  Result<Trace> back = ParseTrace(FormatMooncake(t), "mooncake");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (size_t i = 1; i < 200; ++i)
    EXPECT_EQ(Lcp(back->requests[i - 1].prompt, back->requests[i].prompt),
              Lcp(t.requests[i - 1].prompt, t.requests[i].prompt));
}

}  // namespace
}  // namespace lineage::sim
