// TraceSegmenter against brute force: random prompts that reuse random
// prefixes of earlier prompts and prompt + reply sequences, over a 3-token
// alphabet so that chance matches (which the replay must also see) are
// everywhere; every replayed common prefix is compared with the real one.
#include <gtest/gtest.h>

#include <random>

#include "trace/segmenter.h"
#include "trace/trace.h"

namespace lineage::trace {
namespace {

constexpr int64_t B = TraceSegmenter::kBlockTokens;

std::vector<Segment> ToSim(const std::vector<TraceSegment>& segments) {
  std::vector<Segment> out;
  for (const TraceSegment& s : segments) out.push_back({s.id, static_cast<uint32_t>(s.num_tokens), Role::kUser});
  return out;
}

int64_t RealLcp(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return static_cast<int64_t>(i);
}

struct Logged {
  std::vector<int32_t> prompt, output;
  std::vector<Segment> seg_prompt, seg_with_output;
};

// Request i starts from a random prefix of an earlier prompt or prompt +
// reply and appends random tokens; replies start with a token of their own
// (two replies that begin alike are the documented exception).
std::vector<Logged> Generate(TraceSegmenter& segmenter, uint64_t seed, int num_requests) {
  std::mt19937_64 rng(seed);
  std::vector<Logged> logged;
  for (int i = 0; i < num_requests; ++i) {
    Logged l;
    if (!logged.empty() && rng() % 8 != 0) {
      const Logged& from = logged[rng() % logged.size()];
      std::vector<int32_t> base = from.prompt;
      if (rng() % 2) base.insert(base.end(), from.output.begin(), from.output.end());
      size_t keep = rng() % 4 == 0 ? base.size() : rng() % (base.size() + 1);
      l.prompt.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(keep));
    }
    size_t add = 1 + rng() % (rng() % 4 == 0 ? 3 * B : 12);
    for (size_t k = 0; k < add; ++k) l.prompt.push_back(static_cast<int32_t>(rng() % 3));
    l.output.push_back(1000 + i);
    size_t reply = rng() % (2 * B);
    for (size_t k = 0; k < reply; ++k) l.output.push_back(static_cast<int32_t>(rng() % 3));
    int64_t m = static_cast<int64_t>(l.prompt.size());
    const int64_t cuts[] = {static_cast<int64_t>(rng() % static_cast<uint64_t>(m + 1))};
    SegmentedRequest cut = segmenter.Cut(l.prompt, cuts, l.output);
    int64_t total = 0;
    for (const TraceSegment& s : cut.prompt) {
      EXPECT_GE(s.num_tokens, 1);
      EXPECT_LT(s.id, uint64_t{1} << 63);
      total += s.num_tokens;
    }
    EXPECT_EQ(total, m);
    EXPECT_EQ(cut.output.num_tokens, static_cast<int64_t>(l.output.size()));
    l.seg_prompt = ToSim(cut.prompt);
    l.seg_with_output = l.seg_prompt;
    l.seg_with_output.push_back({cut.output.id, static_cast<uint32_t>(cut.output.num_tokens), Role::kAssistant});
    logged.push_back(std::move(l));
  }
  return logged;
}

TEST(TraceSegmenter, ReplayedCommonPrefixesEqualTheRealOnes) {
  for (uint64_t seed : {1, 2, 3}) {
    TraceSegmenter segmenter;
    std::vector<Logged> q = Generate(segmenter, seed, 150);
    for (size_t i = 0; i < q.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        ASSERT_EQ(Lcp(q[i].seg_prompt, q[j].seg_prompt), RealLcp(q[i].prompt, q[j].prompt))
            << "seed " << seed << ": " << i << " vs prompt " << j;
        std::vector<int32_t> with_output = q[j].prompt;
        with_output.insert(with_output.end(), q[j].output.begin(), q[j].output.end());
        ASSERT_EQ(Lcp(q[i].seg_prompt, q[j].seg_with_output), RealLcp(q[i].prompt, with_output))
            << "seed " << seed << ": " << i << " vs prompt + reply " << j;
      }
    }
  }
}

// A memory that keeps forgetting (generations of 100 tokens) never makes two
// sequences share more in replay than they really do.
TEST(TraceSegmenter, ForgettingNeverInventsSharing) {
  TraceSegmenter segmenter(/*memory_tokens=*/100);
  std::vector<Logged> q = Generate(segmenter, 7, 150);
  EXPECT_LE(segmenter.remembered_tokens(), 2 * (100 + 2 * B + 1));
  int64_t shared_total = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      int64_t replayed = Lcp(q[i].seg_prompt, q[j].seg_prompt);
      ASSERT_LE(replayed, RealLcp(q[i].prompt, q[j].prompt)) << i << " vs " << j;
      shared_total += replayed;
    }
  }
  EXPECT_GT(shared_total, 0);
}

}  // namespace
}  // namespace lineage::trace
