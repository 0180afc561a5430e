#include <gtest/gtest.h>

#include <map>

#include "sim/trace_io.h"
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

TEST(Tracegen, CodingHasParallelSubAgentsWithNearlyEqualSystemPrompts) {
  Trace t = Gen("coding", 5, 1500);
  bool found = false;
  for (size_t i = 0; i + 1 < t.requests.size() && !found; ++i) {
    const Request &a = t.requests[i], &b = t.requests[i + 1];
    if (a.arrival_ms != b.arrival_ms || a.session == b.session) continue;
    int64_t lcp = Lcp(a.prompt, b.prompt);
    // Different agent types: they part within the 4-token variant near the prompt's end.
    if (lcp < a.anchor_tokens && a.anchor_tokens - lcp <= 44 && lcp >= 9000) found = true;
  }
  EXPECT_TRUE(found);
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

}  // namespace
}  // namespace lineage::sim
