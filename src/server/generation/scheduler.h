// Scheduler: the one thread that runs the engine for every request
// (continuous batching, DESIGN.md §2).
//
// Each turn of its loop:
//   1. admits queued jobs while fewer than max_live sequences run:
//      cache::RequestDriver::Begin (lookup) -> engine.Admit from the restore
//      point (shares KV pages, copies the recurrent state) -> stream.Admitted(r);
//      the driver carries the request's cache side to the end, exactly as
//      the simulator drives it (src/sim/policies/lineage_adapter.cpp);
//      a request whose prefix another sequence is prefilling waits for that
//      sequence's capture instead (in-flight sharing, cache/request_driver.h):
//      it is admitted from the capture once it comes, or from its own
//      restore point if the other prefill ends first;
//   2. runs one prefill chunk of one prefilling sequence (round robin), split
//      at the capture points (its own and those others wait for, handed out
//      after the chunk), so a long prompt never freezes the others;
//      at prompt end: driver.Commit, then the first token is sampled;
//      a prefill cancelled midway commits what it prefilled (CommitPartial);
//   3. runs one decode step over every decoding sequence at once;
//      a request with a grammar (tool_choice) samples only tokens that
//      continue it (token_constraint.h); others pay nothing for it;
//      a request with speculative decoding (Job::spec) adds its drafts to
//      its row, the step verifies them (engine.Verify) and the rows are
//      sampled in order while they agree with the drafts; the sequence is
//      rewound past the rest (engine/speculation.h), so everything after
//      (stop checks, the cache's Extend) sees only tokens taken;
//   4. ends sequences that finished, hit a limit, or whose client went away:
//      driver.Extend (the reply's KV and state are already there; a failure
//      is noted in the report), then the stream is closed with the report.
//
// Ownership: the scheduler borrows the engine and the cache, which must
// outlive it; it owns its thread. Thread-safety: Enqueue() may be called
// from any thread; everything else runs on the scheduler thread, which is
// the only user of the engine.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cache/lineage_cache.h"
#include "cache/request_driver.h"
#include "core/status.h"
#include "engine/engine.h"
#include "engine/sampler.h"
#include "engine/speculation.h"
#include "server/generation/backend.h"
#include "server/tools/token_constraint.h"
#include "server/tools/tool_grammar_request.h"
#include "trace/trace_log.h"
#include "text/tokenizer.h"

namespace lineage::server {

struct SchedulerOptions {
  int max_live = 4;                   // sequences admitted at once (--parallel)
  int max_queue = 64;                 // waiting jobs before Enqueue refuses
  int64_t context_tokens = 4096;      // prompt + reply limit per sequence
  int64_t prefill_chunk_tokens = 256; // per loop turn: bounds the stall of decoding sequences
  bool extend_after_generation = true;
  trace::TraceLog* trace_log = nullptr;      // borrowed; every finished request is appended
  // A prefill still running after this long logs a progress line (tokens
  // done / total, tokens/s) and again after each further interval; 0: never.
  std::chrono::milliseconds prefill_log_interval{5000};
  // Where the progress lines go (tests); null: stderr.
  std::function<void(const std::string&)> log;
  // Chunk reuse (--cache-reuse, set by EngineBackend): called after admission,
  // before any prefill; may append rows for prompt[seq.num_tokens(), ...) to
  // `seq` and returns how many it appended. The prefill starts after them.
  std::function<int64_t(std::span<const int32_t> prompt, const cache::LookupResult&, engine::Sequence&)> after_admit;
};

struct Job {
  std::vector<int32_t> prompt;
  cache::LookupHints hints;
  engine::SamplingParams sampling;
  engine::LogitAdjustments adjust;
  engine::SpecOptions spec;  // speculative decoding (drafts per step), off by default
  int64_t max_tokens = -1;  // -1: until the context is full
  int32_t top_logprobs = -1;  // >= 0: each token's logprob and that many alternatives' (SamplingParams)
  std::string notes;        // copied into the report (RequestReport::notes)
  // The reply's grammar (tool_choice required or named); null: unconstrained.
  std::shared_ptr<const ToolGrammar> grammar;
  std::shared_ptr<GenerationStream> stream;
  std::chrono::steady_clock::time_point submitted = std::chrono::steady_clock::now();
};

class Scheduler {
 public:
  Scheduler(engine::Engine* engine, cache::LineageCache* cache, text::Tokenizer tokenizer, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // kResourceExhausted when max_queue jobs already wait. The first job with
  // a grammar builds the vocabulary trie here (about a second for 248k tokens).
  Status Enqueue(Job job);
  // Jobs that arrive together (a client's parallel sub-agents): queued at
  // once, all or none, so that one loop turn admits them together.
  Status Enqueue(std::vector<Job> jobs);
  // Ends the loop; running and queued jobs are closed as cancelled.
  void Stop();

  const SchedulerOptions& options() const { return options_; }
  // Sequences running or waiting to resume, as of the loop's last turn.
  int64_t sequences_live() const { return sequences_live_.load(std::memory_order_relaxed); }

 private:
  struct Live;
  using Clock = std::chrono::steady_clock;
  // A job whose restore point is another sequence's prefill still running.
  struct Waiting {
    Job job;
    cache::RequestDriver driver;
    Clock::time_point t0;
  };
  void Loop();
  void Admit(Job job);
  // Admits a looked-up job into the engine from driver.restore().
  void Start(Job job, cache::RequestDriver driver, Clock::time_point t0);
  // Admits the waiting jobs whose capture came or whose wait ended.
  void ResumeWaiting();
  void PrefillOne();
  void DecodeAll();
  // Logs the progress of a long prefill (SchedulerOptions::prefill_log_interval).
  void LogPrefillProgress(Live& live);
  // How a sequence ends, when a token ends it.
  struct End {
    FinishReason reason;
    Status error;
  };
  // Samples from `logits` and emits the token; returns the end if the
  // sequence ends there (the caller finishes it, after any rewind).
  std::optional<End> Emit(Live& live, std::span<const float> logits);
  // Emit, then Finish if it ended.
  void TakeToken(Live& live, std::span<const float> logits);
  // A sampled token's logprob and the `top` likeliest alternatives', from its row's logits.
  TokenLogprob LogprobOf(int32_t token, std::span<const float> logits, int32_t top) const;
  // How many drafts the sequence's next step may verify: what max_tokens
  // and the context leave after the token sampled last.
  int64_t DraftLimit(const Live& live) const;
  // Drafts for every sequence of the next step (none where it does not
  // speculate): prompt lookup, or the MTP block in one batched pass.
  std::vector<std::vector<int32_t>> Drafts(std::span<Live* const> batch);
  // Commits the sequence holding the first `num_tokens` prompt tokens.
  void CommitPrompt(Live& l, int64_t num_tokens);
  void Finish(Live& live, FinishReason reason, Status error = Status::Ok());
  void Reap();
  // The sampler's draw, among the tokens the constraint allows if there is one.
  Result<int32_t> Sample(Live& live, std::span<const float> logits);

  engine::Engine* engine_;
  cache::LineageCache* cache_;
  text::Tokenizer tokenizer_;
  SchedulerOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;

  // Scheduler thread only.
  std::vector<std::unique_ptr<Live>> live_;
  std::vector<Waiting> waiting_;
  size_t next_prefill_ = 0;
  engine::StepCosts step_costs_;  // what a step of n rows per sequence costs against a decode step, measured
  std::atomic<int64_t> sequences_live_{0};  // sequences_live(), set by the loop
  // Built at the first constrained request, on its connection's thread (in
  // Enqueue, so decoding never waits for it), then shared by all of them.
  std::once_flag constraint_vocab_once_;
  std::shared_ptr<const TokenConstraintVocab> constraint_vocab_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace lineage::server
