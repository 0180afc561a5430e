// The off switch (DESIGN.md §3.5, last point): CacheMode::kExact reproduces
// the previous design's numbers on the same traffic.
#include "cache_harness.h"

namespace lineage::cache::testing {
namespace {

constexpr int64_t kPage = 1024;
constexpr int64_t kBlob = 256;
int64_t Pages(int64_t tokens) { return (tokens + 63) / 64; }
// One whole snapshot of the previous design: a private copy of every page.
int64_t Snapshot(int64_t tokens) { return Pages(tokens) * kPage + kBlob; }

TEST(CacheOffSwitch, ReproducesThePreviousDesignsNumbers) {
  CacheOptions o;
  o.mode = CacheMode::kExact;
  Harness h(o, {64, kPage, kBlob}, int64_t{1} << 40);
  TokenSource src;
  std::vector<int64_t> lengths, restored;
  Tokens prompt;
  for (int turn = 1; turn <= 6; ++turn) {
    prompt = Cat({prompt, src.Fresh(turn == 1 ? 1000 : 300)});
    Outcome out = h.Run(prompt);
    lengths.push_back(Len(prompt));
    restored.push_back(out.restore.length);
    EXPECT_EQ(out.captures, (std::vector<PlannedCapture>{{Len(prompt) - 16, PointKind::kGuard}}));
  }
  // Each turn restores the previous prompt's whole snapshot.
  EXPECT_EQ(restored, (std::vector<int64_t>{0, 1000, 1300, 1600, 1900, 2200}));
  // Two snapshots per turn, 8 in RAM: turns 5 and 6 each evict two.
  const CacheStats st = h.cache().Stats();
  EXPECT_EQ(st.entries, 8);
  EXPECT_EQ(st.evictions, 4);
  EXPECT_EQ(st.checkpoints, 0);
  int64_t written = 0, held = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const int64_t m = lengths[i];
    written += Snapshot(m - 16) + Snapshot(m);
    if (i >= 2) held += Snapshot(m - 16) + Snapshot(m);
  }
  EXPECT_EQ(st.disk.bytes_written, written);
  EXPECT_EQ(st.ram_bytes, held);
  // An identical resend restores the m - 16 snapshot.
  EXPECT_EQ(h.Run(prompt).restore.length, lengths.back() - 16);
}

TEST(CacheOffSwitch, LineageWritesLessOnTheSameTraffic) {
  TokenSource src;
  std::vector<Tokens> prompts;
  Tokens prompt;
  for (int turn = 1; turn <= 6; ++turn) prompts.push_back(prompt = Cat({prompt, src.Fresh(300)}));
  int64_t written[2] = {0, 0};
  for (int mode = 0; mode < 2; ++mode) {
    CacheOptions o;
    o.mode = mode == 0 ? CacheMode::kLineage : CacheMode::kExact;
    Harness h(o, {64, kPage, kBlob}, int64_t{1} << 40);
    for (const Tokens& p : prompts) h.Run(p);
    written[mode] = h.cache().Stats().disk.bytes_written;
  }
  // Lineage writes each page once (plus one copied page per turn) and small states.
  EXPECT_LT(written[0], written[1] / 4);
}

}  // namespace
}  // namespace lineage::cache::testing
