// In-flight sharing in the server's scheduler: two requests that arrive
// together and share a long prefix prefill it once; the second is admitted
// from the first's capture and generates exactly what it generates alone.
#include <gtest/gtest.h>

#include <filesystem>

#include "cache/cache_options.h"
#include "e2e_stack.h"
#include "engine/engine.h"
#include "server/generation/scheduler.h"
#include "text/tokenizer.h"

namespace lineage::server {
namespace {

struct Done {
  std::string text;
  RequestReport report;
};

Done Collect(GenerationStream& s) {
  Done d;
  for (;;) {
    bool got = false;
    GenerationItem item = s.Pull(std::chrono::milliseconds(60'000), &got);
    EXPECT_TRUE(got) << "no news from the scheduler for a minute";
    if (!got) return d;
    d.text += item.text;
    if (item.done) {
      EXPECT_TRUE(item.error.ok()) << item.error.ToString();
      d.report = item.report;
      return d;
    }
  }
}

class InFlightSharing : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lineage_inflight_" + std::to_string(::getpid()));
    const std::string path = testing::WriteTinyQwen35(dir_);
    auto m = model::LoadModel(path);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = *m;
    auto tok = text::LoadTokenizer(path);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    tokenizer_ = std::make_unique<text::Tokenizer>(*tok);
    auto e = engine::Engine::Create(model_, {});
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static SchedulerOptions Options() {
    SchedulerOptions so;
    so.prefill_chunk_tokens = 64;
    so.prefill_log_interval = std::chrono::milliseconds(0);
    return so;
  }
  static Job MakeJob(const std::vector<int32_t>& prompt, int64_t anchor = 0) {
    Job j;
    j.prompt = prompt;
    j.hints.anchor_tokens = anchor;
    j.max_tokens = 6;
    j.stream = std::make_shared<GenerationStream>();
    return j;
  }

  // Runs `prompts` through one scheduler on a fresh cache, all enqueued at once.
  std::vector<Done> Run(const std::vector<std::vector<int32_t>>& prompts, bool share) {
    cache::CacheOptions co;
    co.recurrent = true;
    co.share_in_flight = share;
    cache::LineageCache cache(co);
    Scheduler sched(engine_.get(), &cache, *tokenizer_, Options());
    std::vector<Job> jobs;
    std::vector<std::shared_ptr<GenerationStream>> streams;
    for (const auto& p : prompts) {
      jobs.push_back(MakeJob(p));
      streams.push_back(jobs.back().stream);
    }
    EXPECT_TRUE(sched.Enqueue(std::move(jobs)).ok());
    std::vector<Done> out;
    for (auto& s : streams) out.push_back(Collect(*s));
    return out;
  }

  // Runs `prompts` one after another through one scheduler on one cache,
  // each with its anchor hint, the cache sized by the model's state and KV.
  std::vector<Done> RunInTurn(const std::vector<std::pair<std::vector<int32_t>, int64_t>>& prompts,
                              bool anchor_rungs) {
    cache::CacheOptions co;
    co.recurrent = true;
    co.anchor_rungs = anchor_rungs;
    co.state_bytes = model_->config.recurrent_bytes();
    co.kv_bytes_per_token = model_->config.kv_bytes_per_token();
    cache::LineageCache cache(co);
    Scheduler sched(engine_.get(), &cache, *tokenizer_, Options());
    std::vector<Done> out;
    for (const auto& [prompt, anchor] : prompts) {
      Job j = MakeJob(prompt, anchor);
      auto stream = j.stream;
      EXPECT_TRUE(sched.Enqueue(std::move(j)).ok());
      out.push_back(Collect(*stream));
    }
    return out;
  }

  std::filesystem::path dir_;
  std::shared_ptr<const model::Model> model_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::unique_ptr<engine::Engine> engine_;
};

std::vector<int32_t> Tokens(int32_t first, int64_t n) {
  std::vector<int32_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>(first + (i * 7919) % 200));
  return t;
}

std::vector<int32_t> Cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(InFlightSharing, TwoRequestsWithOneLongPrefixPrefillItOnce) {
  // 706 shared tokens: b waits for a's state at 704, a chunk boundary, so
  // that a's chunks (and their floating-point sums) are the same with and
  // without the extra capture.
  const std::vector<int32_t> doc = Tokens(300, 706);
  const std::vector<int32_t> a = Cat(doc, Tokens(500, 40)), b = Cat(doc, Tokens(700, 30));
  std::vector<Done> together = Run({a, b}, true);
  ASSERT_EQ(together.size(), 2u);
  EXPECT_EQ(together[0].report.cached_tokens, 0);
  // b waited for a's capture where they part instead of computing the 700 tokens again.
  EXPECT_EQ(together[1].report.cached_tokens, cache::BeforeBoundary(706)) << together[1].report.cache_detail;
  EXPECT_NE(together[1].report.cache_detail.find("running prefill"), std::string::npos);
  // Without sharing, b computes the whole prompt itself.
  std::vector<Done> apart = Run({a, b}, false);
  EXPECT_EQ(apart[1].report.cached_tokens, 0);
  // The shared state is the state: b generates the same tokens either way.
  EXPECT_EQ(together[1].text, apart[1].text);
  EXPECT_EQ(together[0].text, apart[0].text);
}

// A sub-agent whose tool list leaves the parent's inside the tools restores
// from a rung of the parent's anchor (cache::CacheOptions::anchor_rungs) and
// generates exactly what it generates on a cold cache.
TEST_F(InFlightSharing, ASubAgentRestoresFromARungAndGeneratesWhatItDoesCold) {
  const std::vector<int32_t> tools_a = Tokens(300, 700), task_tool = Tokens(500, 150), tools_b = Tokens(700, 300);
  const std::vector<int32_t> parent = Cat(Cat(tools_a, task_tool), tools_b), child = Cat(tools_a, tools_b);
  const std::vector<int32_t> main_prompt = Cat(parent, Tokens(100, 30)), sub_prompt = Cat(child, Tokens(800, 20));
  const int64_t parent_len = static_cast<int64_t>(parent.size()), child_len = static_cast<int64_t>(child.size());
  std::vector<Done> with = RunInTurn({{main_prompt, parent_len}, {sub_prompt, child_len}}, true);
  std::vector<Done> without = RunInTurn({{main_prompt, parent_len}, {sub_prompt, child_len}}, false);
  std::vector<Done> cold = RunInTurn({{sub_prompt, child_len}}, true);
  ASSERT_EQ(with.size(), 2u);
  EXPECT_GT(with[1].report.cached_tokens, 0) << with[1].report.cache_detail;
  EXPECT_LE(with[1].report.cached_tokens, 700);
  EXPECT_NE(with[1].report.cache_detail.find("periodic"), std::string::npos) << with[1].report.cache_detail;
  EXPECT_EQ(without[1].report.cached_tokens, 0) << without[1].report.cache_detail;
  EXPECT_EQ(cold[0].report.cached_tokens, 0);
  EXPECT_EQ(with[1].text, cold[0].text);
  EXPECT_EQ(with[0].text, without[0].text);
}

}  // namespace
}  // namespace lineage::server
