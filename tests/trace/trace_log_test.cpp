// The --trace-log writer, read back by the simulator's own trace reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace/trace_log.h"
#include "trace/trace.h"
#include "trace/trace_io.h"
#include "full_disk_env.h"

namespace lineage::trace {
namespace {

std::vector<int32_t> Range(int32_t from, int32_t n) {
  std::vector<int32_t> v;
  for (int32_t i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

TEST(TraceLog, TheSimulatorReadsItAndSeesTheSharedPrefix) {
  std::string path = (std::filesystem::temp_directory_path() / ("lineage_trace_" + std::to_string(::getpid()) + ".jsonl")).string();
  constexpr int64_t B = TraceLog::kBlockTokens;
  std::vector<int32_t> turn1 = Range(0, 3 * B + 10);
  std::vector<int32_t> turn2 = turn1;             // turn 1 plus more
  for (int32_t t : Range(5000, 2 * B)) turn2.push_back(t);
  std::vector<int32_t> other = Range(0, 2 * B + 5);  // shares 2 blocks + 5 tokens with turn 1
  other.push_back(9999);
  for (int32_t t : Range(7000, B)) other.push_back(t);
  {
    auto log = TraceLog::Open(path);
    ASSERT_TRUE(log.ok());
    (*log)->NoteSubmitted(turn1, 3 * B);
    (*log)->Append(0, turn1, 100, Range(100000, 12));
    (*log)->Append(1500, turn2, 100, Range(200000, 7));
    (*log)->Append(1600, other, 100, {}, 40);
  }  // closed: trailer written
  auto trace = ReadTrace(path);  // verifies the header, the count and the checksum
  std::filesystem::remove(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->requests.size(), 3u);
  const auto& r = trace->requests;
  EXPECT_EQ(r[0].num_prompt_tokens, static_cast<int64_t>(turn1.size()));
  EXPECT_EQ(r[1].num_prompt_tokens, static_cast<int64_t>(turn2.size()));
  EXPECT_EQ(r[1].arrival_ms, 1500);
  EXPECT_EQ(r[0].anchor_tokens, 100);  // the prefix, as the cache was given it
  EXPECT_EQ(r[0].system_end_tokens, 0);
  EXPECT_EQ(r[2].system_end_tokens, 40);  // the system text's end, as the cache was given it
  EXPECT_EQ(r[0].output.num_tokens, 12u);
  // Submitted through the backend: its history end and when it ended.
  EXPECT_EQ(r[0].history_end_tokens, 3 * B);
  EXPECT_GE(r[0].end_ms, r[0].arrival_ms);
  EXPECT_EQ(r[1].history_end_tokens, 0);
  EXPECT_EQ(r[1].end_ms, -1);
  // The previous prompt's partial last block and a divergence inside a block
  // are matched exactly.
  EXPECT_EQ(Lcp(r[1].prompt, r[0].prompt), 3 * B + 10);
  EXPECT_EQ(Lcp(r[2].prompt, r[0].prompt), 2 * B + 5);
}

// Ids are keyed by a salt drawn at Open(): two runs logging the same prompt
// write different ids (no guess of the text can be checked against them).
TEST(TraceLog, TwoRunsShareNoIds) {
  std::vector<uint64_t> first_ids;
  for (int run = 0; run < 2; ++run) {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("lineage_trace_s" + std::to_string(run) + "_" + std::to_string(::getpid()) + ".jsonl")).string();
    {
      auto log = TraceLog::Open(path);
      ASSERT_TRUE(log.ok());
      (*log)->Append(0, Range(0, 100), 0, Range(500, 4));
    }
    auto trace = ReadTrace(path);
    std::filesystem::remove(path);
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    for (const Segment& s : trace->requests[0].prompt) {
      if (run == 0) first_ids.push_back(s.id);
      else EXPECT_EQ(std::count(first_ids.begin(), first_ids.end(), s.id), 0);
    }
  }
  EXPECT_EQ(first_ids.size(), 2u);  // cut at the grid and the end
}

TEST(TraceLog, AKilledServerLeavesAReadableTrace) {
  std::string path = (std::filesystem::temp_directory_path() / ("lineage_trace_k" + std::to_string(::getpid()) + ".jsonl")).string();
  auto log = TraceLog::Open(path);
  ASSERT_TRUE(log.ok());
  (*log)->Append(0, Range(0, 70), 0, Range(1, 3));
  // Not closed: no trailer yet, as after a kill.
  auto trace = ReadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->requests.size(), 1u);
  (*log)->Close();
  std::filesystem::remove(path);
}

// A full disk ends the log, not the requests: the lines written before it
// read back (the torn one skipped), later appends are dropped, and the
// reason is kept.
TEST(TraceLog, AFullDiskEndsTheLogAndKeepsWhatWasWritten) {
  std::string path = (std::filesystem::temp_directory_path() / ("lineage_trace_full_" + std::to_string(::getpid()) + ".jsonl")).string();
  std::string whole;  // the first two requests' bytes, measured on a disk with room
  {
    auto log = TraceLog::Open(path);
    ASSERT_TRUE(log.ok());
    (*log)->Append(0, Range(0, 100), 0, Range(500, 4));
    (*log)->Append(10, Range(0, 150), 0, Range(600, 4));
    (*log)->Close();
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    whole = text.str();
  }
  const int64_t two_lines = static_cast<int64_t>(whole.find('\n', whole.find('\n', whole.find('\n') + 1) + 1) + 1);
  testing::FullDiskEnv env(two_lines + 20);  // the third line is torn
  {
    auto log = TraceLog::Open(path, TraceSegmenter::kDefaultMemoryTokens, &env);
    ASSERT_TRUE(log.ok());
    (*log)->Append(0, Range(0, 100), 0, Range(500, 4));
    (*log)->Append(10, Range(0, 150), 0, Range(600, 4));
    EXPECT_TRUE((*log)->status().ok());
    (*log)->Append(20, Range(0, 200), 0, Range(700, 4));
    EXPECT_EQ((*log)->status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE((*log)->status().ToString().find("No space left"), std::string::npos);
    (*log)->Append(30, Range(0, 250), 0, Range(800, 4));  // dropped, no crash
  }
  auto trace = ReadTrace(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->requests.size(), 2u);
  EXPECT_EQ(trace->requests[1].num_prompt_tokens, 150);
}

TEST(TraceLog, AFileThatCannotBeCreatedIsAClearError) {
  auto log = TraceLog::Open("/nonexistent-dir-for-lineage/trace.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().ToString().find("trace log"), std::string::npos) << log.status().ToString();
  EXPECT_NE(log.status().ToString().find("/nonexistent-dir-for-lineage/trace.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace lineage::trace
