#include "server/generation/scheduler.h"

#include <algorithm>
#include <cstdio>

#include "core/prefill_steps.h"

namespace lineage::server {

namespace {
using Clock = std::chrono::steady_clock;
int64_t Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::microseconds>(b - a).count();
}
}  // namespace

struct Scheduler::Live {
  Job job;
  engine::Sequence seq;
  cache::RequestDriver driver;  // the cache side: lookup, lease, captures, entry
  engine::Sampler sampler;
  engine::Speculator spec;
  std::unique_ptr<TokenConstraint> constraint;  // null: unconstrained
  std::vector<float> masked_logits;
  std::vector<int32_t> generated;  // sampled tokens; all but the last are in seq
  bool decoding = false;
  bool done = false;
  RequestReport report;
  std::vector<float> logits;  // of the last prefill chunk
  Clock::time_point admitted = Clock::now();
  Clock::time_point last_progress_log = admitted;

  Live(Job j, engine::Sequence s, cache::RequestDriver d)
      : job(std::move(j)),
        seq(std::move(s)),
        driver(std::move(d)),
        sampler(job.sampling, job.adjust),
        spec(job.spec) {}
  int64_t prompt_tokens() const { return static_cast<int64_t>(job.prompt.size()); }
};

Scheduler::Scheduler(engine::Engine* engine, cache::LineageCache* cache, text::Tokenizer tokenizer,
                     SchedulerOptions options)
    : engine_(engine), cache_(cache), tokenizer_(std::move(tokenizer)), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status Scheduler::Enqueue(Job job) {
  std::vector<Job> one;
  one.push_back(std::move(job));
  return Enqueue(std::move(one));
}

Status Scheduler::Enqueue(std::vector<Job> jobs) {
  for (const Job& job : jobs) {
    if (job.grammar)
      std::call_once(constraint_vocab_once_, [&] { constraint_vocab_ = TokenConstraintVocab::Build(tokenizer_); });
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return ResourceExhausted("the server is shutting down");
    if (static_cast<int>(queue_.size() + jobs.size()) > options_.max_queue)
      return ResourceExhausted("all " + std::to_string(options_.max_queue) + " queue places are taken");
    for (Job& job : jobs) queue_.push_back(std::move(job));
  }
  cv_.notify_all();
  return Status::Ok();
}

void Scheduler::Admit(Job job) {
  RequestReport report;
  report.prompt_tokens = static_cast<int64_t>(job.prompt.size());
  report.notes = job.notes;
  if (job.stream->cancelled()) {
    job.stream->Close(FinishReason::kCancelled, report);
    return;
  }
  auto t0 = Clock::now();
  Result<cache::RequestDriver> driver = cache::RequestDriver::Begin(*cache_, job.prompt, job.hints);
  if (!driver.ok()) {
    job.stream->Close(FinishReason::kError, report, driver.status().With("cache lookup"));
    return;
  }
  if (driver->waiting()) {
    waiting_.push_back({std::move(job), std::move(driver).value(), t0});
    return;
  }
  Start(std::move(job), std::move(driver).value(), t0);
}

void Scheduler::ResumeWaiting() {
  for (size_t i = 0; i < waiting_.size();) {
    Waiting& w = waiting_[i];
    const bool cancelled = w.job.stream->cancelled();
    if (!cancelled && w.driver.TakeShared() == cache::SharedState::kPending) {
      ++i;
      continue;
    }
    Waiting ready = std::move(w);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    if (cancelled) {
      RequestReport report;
      report.prompt_tokens = static_cast<int64_t>(ready.job.prompt.size());
      report.notes = ready.job.notes;
      ready.driver.Release();
      ready.job.stream->Close(FinishReason::kCancelled, report);
      continue;
    }
    Start(std::move(ready.job), std::move(ready.driver), ready.t0);
  }
}

void Scheduler::Start(Job job, cache::RequestDriver d, Clock::time_point t0) {
  RequestReport report;
  report.prompt_tokens = static_cast<int64_t>(job.prompt.size());
  report.notes = job.notes;
  const cache::LookupResult& lr = d.lookup();
  const cache::RestorePoint& rp = lr.restore;
  Result<engine::Sequence> seq = rp.length == 0 ? Result<engine::Sequence>(engine_->NewSequence())
                                                : engine_->Admit(*rp.kv, rp.state.get());
  if (!seq.ok()) {
    job.stream->Close(FinishReason::kError, report, seq.status().With("admission"));
    return;
  }
  const int64_t reused = options_.after_admit ? options_.after_admit(job.prompt, lr, *seq) : 0;
  report.admission_us = Us(t0, Clock::now());
  report.cached_tokens = rp.length + reused;
  report.reused_tokens = reused;
  report.restore_kind = rp.length == 0 ? "none" : rp.KindName();
  report.restore_tier = rp.length == 0 ? "none" : cache::TierName(rp.tier);
  if (rp.length == 0 && lr.explanation.closest_entry != cache::kNoEntry)
    report.closest_tokens = lr.explanation.closest_shared_tokens;
  report.cache_detail = lr.explanation.ToString();
  if (rp.tier == cache::Tier::kRam && rp.entry == cache::kNoEntry && rp.length > 0)
    report.cache_detail += "; restored from a running prefill's capture";
  const int64_t admitted_tokens = rp.length + reused;
  auto live = std::make_unique<Live>(std::move(job), std::move(seq).value(), std::move(d));
  live->report = report;
  if (live->job.grammar) {
    live->constraint = std::make_unique<TokenConstraint>(live->job.grammar, constraint_vocab_);
  }
  live->job.stream->Admitted(admitted_tokens);
  live_.push_back(std::move(live));
}

void Scheduler::PrefillOne() {
  // Round robin over sequences still prefilling.
  size_t n = live_.size();
  for (size_t k = 0; k < n; ++k) {
    size_t i = (next_prefill_ + k) % n;
    Live& l = *live_[i];
    if (l.decoding || l.done) continue;
    next_prefill_ = i + 1;
    if (l.job.stream->cancelled()) {
      // Keep what was prefilled: a client that timed out during a long
      // prefill and retries lands on it instead of starting cold again.
      CommitPrompt(l, l.seq.num_tokens());
      Finish(l, FinishReason::kCancelled);
      return;
    }
    int64_t pos = l.seq.num_tokens(), m = l.prompt_tokens();
    int64_t end = PrefillStepEnd(pos, m, options_.prefill_chunk_tokens);
    std::vector<int64_t> capture_at = l.driver.CapturesIn(pos, end);
    // From here no point of this step can join its captures: a request that
    // arrives while it runs waits for a point beyond it or one planned.
    l.driver.Progress(end);
    engine::PrefillOptions po;
    po.capture_at = capture_at;
    engine::PrefillResult result;
    auto t0 = Clock::now();
    Status st = engine_->Prefill(l.seq, std::span(l.job.prompt).subspan(pos, end - pos), po, &result);
    l.report.prefill_us += Us(t0, Clock::now());
    if (!st.ok()) return Finish(l, FinishReason::kError, st.With("prefill"));
    for (engine::Capture& c : result.captures) l.driver.Captured(c.num_tokens, std::move(c.recurrent));
    // Requests waiting for this prefix take their captures from here.
    l.driver.Publish([&] { return cache::KvPtr(l.seq.Snap().kv); });
    l.job.stream->Prefilled(end);
    if (end < m) return LogPrefillProgress(l);
    // Prompt end: commit, then the first token.
    CommitPrompt(l, m);
    l.decoding = true;
    TakeToken(l, result.logits);
    return;
  }
}

void Scheduler::LogPrefillProgress(Live& l) {
  if (options_.prefill_log_interval.count() <= 0) return;
  auto now = Clock::now();
  if (now - l.last_progress_log < options_.prefill_log_interval) return;
  l.last_progress_log = now;
  int64_t done = l.seq.num_tokens(), total = l.prompt_tokens(), restored = l.report.cached_tokens;
  double seconds = std::max(1e-6, Us(l.admitted, now) * 1e-6);
  double tokens_per_s = static_cast<double>(done - restored) / seconds;
  char line[256];
  std::snprintf(line, sizeof line, "prefill %lld/%lld tokens (%.0f%%) at %.1f tokens/s, %.0f s left, %lld restored",
                static_cast<long long>(done), static_cast<long long>(total), 100.0 * done / std::max<int64_t>(1, total),
                tokens_per_s, tokens_per_s > 0 ? (total - done) / tokens_per_s : 0.0, static_cast<long long>(restored));
  if (options_.log) options_.log(line);
  else std::fprintf(stderr, "%s\n", line);
}

Result<int32_t> Scheduler::Sample(Live& l, std::span<const float> logits) {
  if (!l.constraint) {
    int32_t token = l.sampler.Next(logits);
    l.sampler.Record(token);
    return token;
  }
  LINEAGE_RETURN_IF_ERROR(l.constraint->ComputeMask());
  l.constraint->Apply(logits, &l.masked_logits);
  int32_t token = l.sampler.Next(l.masked_logits);
  // Rounding at the end of the draw may land on a zero-probability token.
  if (!l.constraint->Allowed(token)) token = engine::Argmax(l.masked_logits);
  LINEAGE_RETURN_IF_ERROR(l.constraint->Accept(token));
  l.sampler.Record(token);
  return token;
}

void Scheduler::TakeToken(Live& l, std::span<const float> logits) {
  if (std::optional<End> end = Emit(l, logits)) Finish(l, end->reason, std::move(end->error));
}

std::optional<Scheduler::End> Scheduler::Emit(Live& l, std::span<const float> logits) {
  Result<int32_t> sampled = Sample(l, logits);
  if (!sampled.ok()) return End{FinishReason::kError, sampled.status().With("constrained sampling")};
  int32_t token = *sampled;
  if (l.report.first_token_us < 0) l.report.first_token_us = Us(l.job.submitted, Clock::now());
  if (tokenizer_.IsEndOfGeneration(token)) return End{FinishReason::kEndOfSequence, Status::Ok()};
  l.generated.push_back(token);
  l.report.completion_tokens = static_cast<int64_t>(l.generated.size());
  std::string bytes = tokenizer_.IsControl(token) ? std::string() : std::string(tokenizer_.TokenBytes(token));
  std::optional<TokenLogprob> logprob;
  if (l.job.top_logprobs >= 0) logprob = LogprobOf(token, logits, l.job.top_logprobs);
  l.job.stream->PushText(std::move(bytes), 1, std::move(logprob));
  bool out_of_budget = l.job.max_tokens >= 0 && static_cast<int64_t>(l.generated.size()) >= l.job.max_tokens;
  // The next step would feed this token: prompt + reply must fit. Counted
  // from the reply, not the sequence, which after a verification step also
  // holds drafts not yet taken.
  bool out_of_context = l.prompt_tokens() + static_cast<int64_t>(l.generated.size()) > options_.context_tokens;
  // A finished grammar allows only an end token: end now, as it would.
  if (l.constraint && l.constraint->matcher().Finished()) return End{FinishReason::kEndOfSequence, Status::Ok()};
  if (out_of_budget || out_of_context) return End{FinishReason::kLength, Status::Ok()};
  return std::nullopt;
}

TokenLogprob Scheduler::LogprobOf(int32_t token, std::span<const float> logits, int32_t top) const {
  const engine::Logprobs lp = engine::LogprobsOf(logits, token, top);
  auto candidate = [&](int32_t id, float logprob) {
    return TokenLogprob::Candidate{id, std::string(tokenizer_.TokenBytes(id)), logprob};
  };
  TokenLogprob out{candidate(token, lp.token), {}};
  for (const auto& [id, v] : lp.top) out.top.push_back(candidate(id, v));
  return out;
}

int64_t Scheduler::DraftLimit(const Live& l) const {
  // Every draft taken is a token: no more than max_tokens and the context
  // leave after the token sampled last (which the step feeds first).
  int64_t limit = options_.context_tokens - (l.seq.num_tokens() + 1);
  if (l.job.max_tokens >= 0) limit = std::min(limit, l.job.max_tokens - static_cast<int64_t>(l.generated.size()));
  return limit;
}

std::vector<std::vector<int32_t>> Scheduler::Drafts(std::span<Live* const> batch) {
  std::vector<std::vector<int32_t>> drafts(batch.size());
  std::vector<engine::MtpDraftRun> mtp;
  int64_t depth = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    Live& l = *batch[i];
    if (!l.spec.enabled()) continue;
    if (l.spec.options().type != engine::SpecType::kMtp) {
      drafts[i] = l.spec.Propose(l.job.prompt, l.generated, DraftLimit(l), step_costs_);
      continue;
    }
    const int64_t k =
        l.spec.DraftCount(l.spec.options().draft_max, DraftLimit(l), step_costs_, step_costs_.draft_cost());
    if (k > 0) mtp.push_back({&l.seq, l.generated.back(), k, &drafts[i]});
    depth = std::max(depth, k);
  }
  if (mtp.empty()) return drafts;
  const auto t0 = Clock::now();
  // Drafts only change how fast: a failed pass costs this step its drafts.
  if (!engine_->DraftMtp(mtp).ok()) {
    for (const engine::MtpDraftRun& r : mtp) r.drafts->clear();
    return drafts;
  }
  step_costs_.ObserveDrafts(depth, static_cast<int64_t>(mtp.size()), Us(t0, Clock::now()) * 1e-6);
  return drafts;
}

void Scheduler::DecodeAll() {
  std::vector<Live*> batch;
  for (auto& l : live_) {
    if (!l->decoding || l->done) continue;
    if (l->job.stream->cancelled()) {
      Finish(*l, FinishReason::kCancelled);
      continue;
    }
    batch.push_back(l.get());
  }
  if (batch.empty()) return;
  // Each sequence's run: its last sampled token, then its drafts if any.
  std::vector<std::vector<int32_t>> runs(batch.size());
  int64_t rows = 0;
  const std::vector<std::vector<int32_t>> drafts = Drafts(batch);
  for (size_t i = 0; i < batch.size(); ++i) {
    runs[i].push_back(batch[i]->generated.back());
    runs[i].insert(runs[i].end(), drafts[i].begin(), drafts[i].end());
    rows += static_cast<int64_t>(runs[i].size());
  }
  std::vector<float> logits;
  const auto t0 = Clock::now();
  Status st;
  if (rows == static_cast<int64_t>(batch.size())) {  // no drafts: the plain decode step
    std::vector<engine::Sequence*> seqs;
    std::vector<int32_t> tokens;
    for (size_t i = 0; i < batch.size(); ++i) {
      seqs.push_back(&batch[i]->seq);
      tokens.push_back(runs[i][0]);
    }
    st = engine_->Decode(seqs, tokens, &logits);
  } else {
    std::vector<engine::VerifyRun> verify;
    for (size_t i = 0; i < batch.size(); ++i) verify.push_back(batch[i]->spec.Run(&batch[i]->seq, runs[i]));
    st = engine_->Verify(verify, &logits);
  }
  if (!st.ok()) {
    for (Live* l : batch) Finish(*l, FinishReason::kError, st.With("decode"));
    return;
  }
  step_costs_.Observe(rows, static_cast<int64_t>(batch.size()), Us(t0, Clock::now()) * 1e-6);
  const size_t vocab = logits.size() / static_cast<size_t>(rows);
  size_t row = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    Live& l = *batch[i];
    const int64_t run = static_cast<int64_t>(runs[i].size());
    const std::span<const float> rows_i = std::span(logits).subspan(row * vocab, runs[i].size() * vocab);
    row += runs[i].size();
    // Rows in order while the token taken is the draft; the first that is
    // not (or that ends the sequence) is the last.
    std::optional<End> end;
    const int64_t used = engine::TakeVerified(std::span(runs[i]).subspan(1), rows_i, static_cast<int64_t>(vocab),
                                              [&](int64_t, std::span<const float> r) -> int64_t {
                                                end = Emit(l, r);
                                                return end ? -1 : l.generated.back();
                                              });
    l.spec.Keep(*engine_, l.seq, l.seq.num_tokens() - run, used, run);  // the step appended the whole run
    l.report.draft_tokens = l.spec.proposed();
    l.report.draft_accepted = l.spec.accepted();
    if (end) Finish(l, end->reason, std::move(end->error));
  }
}

void Scheduler::CommitPrompt(Live& l, int64_t num_tokens) {
  auto t1 = Clock::now();
  engine::Snapshot snap = l.seq.Snap();
  l.report.captures = l.driver.num_captured();
  // A partial prompt (a cancelled prefill) is kept only past the restore point.
  Result<cache::CommitResult> cr = l.driver.CommitPartial(num_tokens, snap.kv, snap.recurrent);
  l.report.commit_us = Us(t1, Clock::now());
  // A failed commit costs reuse, not the request.
  if (!cr.ok()) l.report.cache_detail += "; commit failed: " + cr.status().message();
  else if (l.driver.committed()) l.report.cache_detail += "; commit " + cr->explanation.ToString();
}

void Scheduler::Finish(Live& l, FinishReason reason, Status error) {
  if (l.done) return;
  l.done = true;
  int64_t fed = l.seq.num_tokens();
  if (options_.extend_after_generation && l.driver.entry() != cache::kNoEntry && fed > l.prompt_tokens()) {
    // The sequence holds the prompt and every sampled token but the last.
    cache::Tokens tokens = l.job.prompt;
    tokens.insert(tokens.end(), l.generated.begin(), l.generated.begin() + (fed - l.prompt_tokens()));
    engine::Snapshot snap = l.seq.Snap();
    Status ext = l.driver.Extend(tokens, snap.kv, snap.recurrent);
    if (!ext.ok()) l.report.cache_detail += "; extend failed: " + ext.message();
  }
  l.driver.Release();
  if (options_.trace_log) {
    // The reply as the cache holds it: a reply ended by its length limit (or
    // a finished grammar) leaves its last token unfed, so no state covers it.
    const size_t held = static_cast<size_t>(std::clamp<int64_t>(fed - l.prompt_tokens(), 0,
                                                                static_cast<int64_t>(l.generated.size())));
    options_.trace_log->Append(Us(started_, l.job.submitted) / 1000, l.job.prompt, l.job.hints.anchor_tokens,
                               std::vector<int32_t>(l.generated.begin(), l.generated.begin() + held),
                               l.job.hints.system_end_tokens);
  }
  l.report.total_us = Us(l.job.submitted, Clock::now());
  l.job.stream->Close(reason, l.report, std::move(error));
}

void Scheduler::Reap() {
  live_.erase(std::remove_if(live_.begin(), live_.end(), [](const auto& l) { return l->done; }), live_.end());
}

void Scheduler::Loop() {
  for (;;) {
    std::vector<Job> admit;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (live_.empty() && waiting_.empty()) cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) break;
      while (!queue_.empty() && static_cast<int>(live_.size() + waiting_.size() + admit.size()) < options_.max_live) {
        admit.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    for (Job& j : admit) Admit(std::move(j));
    ResumeWaiting();
    PrefillOne();
    DecodeAll();
    Reap();
    sequences_live_.store(static_cast<int64_t>(live_.size() + waiting_.size()), std::memory_order_relaxed);
  }
  for (auto& l : live_) Finish(*l, FinishReason::kCancelled);
  live_.clear();
  for (Waiting& w : waiting_) {
    w.driver.Release();
    w.job.stream->Close(FinishReason::kCancelled, RequestReport{});
  }
  waiting_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  for (Job& j : queue_) j.stream->Close(FinishReason::kCancelled, RequestReport{});
  queue_.clear();
}

}  // namespace lineage::server
