// RunBench (`lineage bench`) on a tiny model read from a file: the paired
// decode-vs-read figure and the kernels' compute bound are measured and
// reported. (RunBench also measures
// the machine's bandwidth and peak, seconds of work, so this stays one test.)
#include "tools/bench_workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/roofline.h"
#include "engine_test_util.h"
#include "model/load_model.h"
#include "model/test_util.h"

namespace lineage::engine {
namespace {

BenchOptions Small() {
  BenchOptions o;
  o.prompt_tokens = 8;
  o.gen_tokens = 9;
  o.admission_contexts = {};
  return o;
}

TEST(RunBench, PairsEachDecodeStepWithAReadOfItsBytes) {
  auto spec = model::LookupShape(model::Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  const std::string path =
      model::testing_util::Write(*spec, model::FileFormat::kGguf, DType::kF32, 3, "bench_workload.gguf");
  auto m = model::LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto engine = testing::MakeEngine(*m);
  auto r = RunBench(*engine, Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->decode_paired_read_ratio_q1, 0);
  EXPECT_LE(r->decode_paired_read_ratio_q1, r->decode_paired_read_ratio);
  EXPECT_LE(r->decode_paired_read_ratio, r->decode_paired_read_ratio_q3);
  EXPECT_EQ(r->ToJson()["decode_paired_read_ratio"].get<double>(), r->decode_paired_read_ratio);
  EXPECT_NE(r->ToTable().find("paired read"), std::string::npos);
  // The read walks the pattern the probe found fastest, and says which.
  EXPECT_TRUE(std::any_of(std::begin(kReadPatterns), std::end(kReadPatterns),
                          [&](ReadPattern p) { return ReadPatternName(p) == r->decode_paired_read_pattern; }))
      << r->decode_paired_read_pattern;
  EXPECT_EQ(r->ToJson()["decode_paired_read_pattern"].get<std::string>(), r->decode_paired_read_pattern);
  EXPECT_NE(r->ToTable().find("plain read (" + r->decode_paired_read_pattern + ")"), std::string::npos);

  // The compute bound: every decode matrix timed, so a finite rate, which
  // the ratio divides.
  EXPECT_GT(r->decode_compute_bound_tok_s, 0);
  EXPECT_TRUE(std::isfinite(r->decode_compute_bound_tok_s));
  EXPECT_DOUBLE_EQ(r->decode_compute_ratio, r->decode_tok_s / r->decode_compute_bound_tok_s);
  EXPECT_EQ(r->ToJson()["decode_compute_bound_tok_s"].get<double>(), r->decode_compute_bound_tok_s);
  EXPECT_NE(r->ToTable().find("compute bound"), std::string::npos);
}

// --depth lays down context before the timed prompt (llama-bench -d): the
// report says how much, in the table and the JSON; a negative depth is
// refused.
TEST(RunBench, DepthPrefillsContextBeforeTheTimedPrompt) {
  auto spec = model::LookupShape(model::Arch::kQwen3_5, "tiny");
  ASSERT_TRUE(spec.ok());
  const std::string path =
      model::testing_util::Write(*spec, model::FileFormat::kGguf, DType::kF32, 3, "bench_workload_depth.gguf");
  auto m = model::LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto engine = testing::MakeEngine(*m);
  BenchOptions o = Small();
  o.depth_tokens = 40;
  o.batch = 3;  // and decode steps of three sequences at once
  auto r = RunBench(*engine, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->batch, 3);
  EXPECT_GT(r->decode_batch_step_s, 0);
  EXPECT_NE(r->ToTable().find("3 sequences per step"), std::string::npos) << r->ToTable();
  EXPECT_EQ(r->ToJson()["batch"].get<int64_t>(), 3);
  EXPECT_EQ(r->depth_tokens, 40);
  EXPECT_EQ(r->prompt_tokens, 8);
  EXPECT_NE(r->ToTable().find("8 tokens after 40 of context"), std::string::npos) << r->ToTable();
  EXPECT_EQ(r->ToJson()["depth_tokens"].get<int64_t>(), 40);
  o.depth_tokens = -1;
  EXPECT_FALSE(RunBench(*engine, o).ok());
}

}  // namespace
}  // namespace lineage::engine
