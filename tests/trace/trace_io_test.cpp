#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "trace/trace.h"
#include "trace/trace_io.h"

namespace lineage::trace {
namespace {

// Reference LCP: expand both to token ids and compare one by one.
int64_t TokenLcp(std::span<const Segment> a, std::span<const Segment> b) {
  std::vector<uint32_t> ta, tb;
  ExpandTokens(a, ta);
  ExpandTokens(b, tb);
  int64_t n = 0;
  while (n < static_cast<int64_t>(std::min(ta.size(), tb.size())) && ta[static_cast<size_t>(n)] == tb[static_cast<size_t>(n)]) ++n;
  return n;
}

std::vector<Segment> RandomSegments(std::mt19937_64& rng, int count) {
  std::vector<Segment> out;
  for (int i = 0; i < count; ++i) out.push_back({rng() % 6, static_cast<uint32_t>(1 + rng() % 40), Role::kUser});
  return out;
}

TEST(Trace, SegmentLcpEqualsTokenLcp) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    auto a = RandomSegments(rng, 1 + static_cast<int>(rng() % 6));
    auto b = a;
    // Mutate b: cut, change a length (same id: a prefix relation), or replace an id.
    if (rng() % 2) b.resize(rng() % (b.size() + 1));
    if (!b.empty() && rng() % 2) b[rng() % b.size()].num_tokens = static_cast<uint32_t>(1 + rng() % 40);
    if (!b.empty() && rng() % 3 == 0) b[rng() % b.size()].id = rng() % 6;
    auto extra = RandomSegments(rng, static_cast<int>(rng() % 3));
    b.insert(b.end(), extra.begin(), extra.end());
    ASSERT_EQ(Lcp(a, b), TokenLcp(a, b)) << "iteration " << iter;
    ASSERT_EQ(Lcp(b, a), TokenLcp(a, b));
  }
}

TEST(Trace, TruncateKeepsExactlyThePrefix) {
  std::vector<Segment> s = {{1, 10}, {2, 5}, {3, 7}};
  auto t = TruncateTokens(s, 12);
  EXPECT_EQ(NumTokens(t), 12);
  EXPECT_EQ(TokenLcp(s, t), 12);
  EXPECT_EQ(NumTokens(TruncateTokens(s, 100)), 22);
  EXPECT_TRUE(TruncateTokens(s, 0).empty());
}

Trace SmallTrace() {
  Trace t;
  t.scenario = "unit";
  t.seed = 3;
  t.sessions = {"a", "b"};
  Request r1;
  r1.arrival_ms = 0;
  r1.prompt = {{SegmentIdFromString("sys"), 900, Role::kSystem}, {SegmentIdFromString("u1"), 30, Role::kUser}};
  r1.num_prompt_tokens = 930;
  r1.output = {SegmentIdFromString("r1"), 50, Role::kAssistant};
  r1.anchor_tokens = 900;
  r1.system_end_tokens = 300;
  Request r2 = r1;
  r2.arrival_ms = 5000;
  r2.session = 1;
  r2.prompt.push_back({SegmentIdFromString("r1"), 50, Role::kAssistant});
  r2.prompt.push_back({12345, 7, Role::kTool});
  r2.num_prompt_tokens = 987;
  r2.output = {SegmentIdFromString("r2"), 0, Role::kAssistant};
  t.requests = {r1, r2};
  return t;
}

TEST(TraceIo, NativeRoundTrips) {
  Trace t = SmallTrace();
  std::string text = FormatNative(t);
  Result<Trace> back = ParseTrace(text, "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->requests.size(), 2u);
  EXPECT_EQ(back->scenario, "unit");
  EXPECT_EQ(back->seed, 3u);
  for (size_t i = 0; i < 2; ++i) {
    const Request &a = t.requests[i], &b = back->requests[i];
    EXPECT_EQ(a.arrival_ms, b.arrival_ms);
    EXPECT_EQ(t.sessions[a.session], back->sessions[b.session]);
    EXPECT_EQ(a.num_prompt_tokens, b.num_prompt_tokens);
    EXPECT_EQ(a.anchor_tokens, b.anchor_tokens);
    EXPECT_EQ(a.system_end_tokens, b.system_end_tokens);
    EXPECT_EQ(a.output.id, b.output.id);
    ASSERT_EQ(a.prompt.size(), b.prompt.size());
    for (size_t k = 0; k < a.prompt.size(); ++k) {
      EXPECT_EQ(a.prompt[k].id, b.prompt[k].id);
      EXPECT_EQ(a.prompt[k].num_tokens, b.prompt[k].num_tokens);
      EXPECT_EQ(a.prompt[k].role, b.prompt[k].role);
    }
  }
}

TEST(TraceIo, StringIdsHashAndRepeatedRepliesMatch) {
  std::string text =
      "{\"format\":\"lineage-trace\",\"version\":1}\n"
      "{\"t_ms\":0,\"session\":\"a\",\"prompt\":[{\"id\":\"sys\",\"len\":100,\"role\":\"system\"},{\"id\":\"q\",\"len\":3}],"
      "\"output\":{\"id\":\"a.r1\",\"len\":20}}\n"
      "{\"t_ms\":9,\"session\":\"a\",\"prompt\":[{\"id\":\"sys\",\"len\":100,\"role\":\"system\"},{\"id\":\"q\",\"len\":3},"
      "{\"id\":\"a.r1\",\"len\":20,\"role\":\"assistant\"},{\"id\":\"q2\",\"len\":4}],\"output\":{\"id\":\"a.r2\",\"len\":1}}\n";
  Result<Trace> t = ParseTrace(text, "mem");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(Lcp(PromptAndOutput(t->requests[0]), t->requests[1].prompt), 123);
}

// One request is expanded to its tokens when replayed: a few bytes of trace
// must not ask for gigabytes.
TEST(TraceIo, ARequestIsBoundedInTokens) {
  std::string prompt;
  for (int i = 0; i < 2000; ++i) prompt += std::string(i ? "," : "") + "{\"id\":" + std::to_string(i) + ",\"len\":1000000}";
  std::string many = "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[" + prompt + "]}\n";
  Result<Trace> t = ParseTrace(many, "mem");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("prompt longer than"), std::string::npos) << t.status().ToString();
  std::string one = "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":" +
                    std::to_string(kMaxRequestTokens + 1) + "}]}\n";
  EXPECT_FALSE(ParseTrace(one, "mem").ok());
  std::string output = "{\"timestamp\":0,\"input_length\":5,\"output_length\":" + std::to_string(kMaxRequestTokens + 1) +
                       ",\"hash_ids\":[1]}\n";
  EXPECT_FALSE(ParseTrace(output, "mem").ok());
  std::string fits = "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":" +
                     std::to_string(kMaxRequestTokens) + "}]}\n";
  EXPECT_TRUE(ParseTrace(fits, "mem").ok());
}

TEST(TraceIo, ChecksumMismatchIsCorrupt) {
  std::string text = FormatNative(SmallTrace());
  size_t at = text.find("\"t_ms\":5000");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "\"t_ms\":5001");
  Result<Trace> t = ParseTrace(text, "mem");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
}

TEST(TraceIo, MalformedLinesNameTheLine) {
  const char* bad[] = {
      "{\"format\":\"lineage-trace\",\"version\":2}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":1}]}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[]}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":0}]}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":3}],\"history\":3}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":3}],\"history\":\"2\"}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":3}],\"anchor\":2,\"system\":2}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\n{\"t_ms\":0,\"prompt\":[{\"id\":1,\"len\":3}],\"system\":1}\n",
      "{\"format\":\"lineage-trace\",\"version\":1}\nnot json\n",
      "{\"timestamp\":0,\"input_length\":600,\"output_length\":1,\"hash_ids\":[1]}\n",
      "{\"timestamp\":0,\"input_length\":512,\"output_length\":1,\"hash_ids\":[1,2]}\n",
      "",
  };
  for (const char* text : bad) {
    Result<Trace> t = ParseTrace(text, "mem");
    EXPECT_FALSE(t.ok()) << text;
  }
  Result<Trace> t = ParseTrace("{\"format\":\"lineage-trace\",\"version\":1}\nnot json\n", "f.jsonl");
  EXPECT_NE(t.status().message().find("f.jsonl:2"), std::string::npos) << t.status().message();
}

// A server logs requests as they finish: the reader orders them by arrival,
// file order among equal times, and keeps the history end.
TEST(TraceIo, NativeLinesAreOrderedByArrivalAndKeepTheHistoryEnd) {
  std::string text =
      "{\"format\":\"lineage-trace\",\"version\":1}\n"
      "{\"t_ms\":5,\"session\":\"late\",\"prompt\":[{\"id\":1,\"len\":9}],\"history\":6}\n"
      "{\"t_ms\":4,\"session\":\"early\",\"prompt\":[{\"id\":2,\"len\":3}]}\n"
      "{\"t_ms\":5,\"session\":\"tie\",\"prompt\":[{\"id\":3,\"len\":3}]}\n";
  Result<Trace> t = ParseTrace(text, "mem");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->requests.size(), 3u);
  EXPECT_EQ(t->sessions[t->requests[0].session], "early");
  EXPECT_EQ(t->sessions[t->requests[1].session], "late");
  EXPECT_EQ(t->sessions[t->requests[2].session], "tie");
  EXPECT_EQ(t->requests[1].history_end_tokens, 6);
  EXPECT_EQ(t->requests[0].history_end_tokens, 0);
  // Written back, the field survives.
  Result<Trace> again = ParseTrace(FormatNative(*t), "again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->requests[1].history_end_tokens, 6);
}

TEST(TraceIo, MooncakeBlocksChainPrefixes) {
  std::string text =
      "{\"timestamp\":0,\"input_length\":1100,\"output_length\":5,\"hash_ids\":[1,2,3]}\n"
      "{\"timestamp\":10,\"input_length\":1500,\"output_length\":5,\"hash_ids\":[1,2,4]}\n"
      "{\"timestamp\":20,\"input_length\":300,\"output_length\":5,\"hash_ids\":[9]}\n";
  Result<Trace> t = ParseTrace(text, "mc");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->requests.size(), 3u);
  EXPECT_EQ(t->requests[0].num_prompt_tokens, 1100);
  EXPECT_EQ(TokenLcp(t->requests[0].prompt, t->requests[1].prompt), 1024);
  EXPECT_EQ(TokenLcp(t->requests[0].prompt, t->requests[2].prompt), 0);
  EXPECT_NE(t->requests[0].output.id, t->requests[1].output.id);
}

TEST(TraceIo, MooncakeWriterKeepsWholeBlockPrefixes) {
  Trace t = SmallTrace();
  // A longer trace so blocks matter: five prompts sharing 1,300 tokens.
  Request base = t.requests[0];
  t.requests.clear();
  for (int i = 0; i < 5; ++i) {
    Request r = base;
    r.arrival_ms = i;
    r.prompt = {{77, 1300}, {static_cast<uint64_t>(100 + i), static_cast<uint32_t>(50 + 300 * i)}};
    r.num_prompt_tokens = NumTokens(r.prompt);
    t.requests.push_back(r);
  }
  Result<Trace> back = ParseTrace(FormatMooncake(t), "mc");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(back->requests[i].num_prompt_tokens, t.requests[i].num_prompt_tokens);
    for (size_t j = 0; j < i; ++j) {
      int64_t orig = TokenLcp(t.requests[i].prompt, t.requests[j].prompt);
      EXPECT_EQ(TokenLcp(back->requests[i].prompt, back->requests[j].prompt),
                orig / kMooncakeBlockTokens * kMooncakeBlockTokens);
    }
  }
}

}  // namespace
}  // namespace lineage::trace
