// Engine: runs one model over many sequences — chunked prefill with capture
// points, batched decode — and builds sequences from restore points.
//
// Typical use (DESIGN.md §2):
//   auto seq = engine.Admit(*snapshot.kv, snapshot.recurrent.get());  // share pages
//   engine.Prefill(*seq, suffix, {.capture_at = points}, &result);     // captures
//   engine.Decode({&seq_a, &seq_b}, {tok_a, tok_b}, &logits);          // one step
//   Snapshot s = seq->Snap();                                          // commit
//
// The engine decides nothing about what to keep: capture points come from
// the caller. Ownership: the engine shares the Model (immutable) and owns a
// thread pool and scratch buffers. Thread-safety: one call at a time (the
// server's step loop); sequences and snapshots it returns are independent
// objects.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "engine/batch.h"
#include "engine/sequence.h"
#include "engine/workspace.h"
#include "model/weights.h"

namespace lineage::engine {

struct EngineOptions {
  int num_threads = 2;
  int64_t prefill_chunk_tokens = 512;  // rows per prefill step (activation memory ~ rows x 30 KiB at 0.8B)
  int64_t page_tokens = 64;
  // KV page element type: kF32 (exact) or kBF16 (half the bytes per cached
  // token and per decode step's KV read; K and V rounded to bf16).
  DType kv_dtype = DType::kF32;
  // GDN runs of at least this many tokens use the chunked (WY) delta rule,
  // shorter ones the token-by-token recurrence; both give the same result up
  // to rounding. Set from measurement of the two kernels (docs/engine.md).
  int64_t delta_chunked_min_tokens = 8;
  // Latent attention's path for runs of several rows: kAuto (the cost
  // model of latent_paths.h), or one forced for every run (benchmarks, tests).
  LatentPath latent_path = LatentPath::kAuto;
  // Run the file's MTP block as a draft head (DraftMtp): its KV layer joins
  // the pages (one more attention layer per token) and every step fills it.
  // Needs a model with the block (ModelConfig::mtp()).
  bool mtp = false;
};

struct PrefillOptions {
  // Absolute lengths at which to copy the recurrent state out (each within
  // (start, end] of this prefill); captured inside the step that passes
  // them (Segment::captures), no step ends there.
  std::span<const int64_t> capture_at;
  int64_t chunk_tokens = 0;  // 0: EngineOptions::prefill_chunk_tokens
};

struct Capture {
  int64_t num_tokens = 0;
  std::shared_ptr<const RecurrentState> recurrent;  // null for attention-only models
};

struct PrefillResult {
  std::vector<Capture> captures;  // ascending num_tokens
  std::vector<float> logits;      // [vocab], of the last token prefilled
};

// What a verification step keeps so that its drafts can be rolled back
// (Engine::RollBack), reused round after round by one sequence: the
// recurrent state before the step, the run's raw conv rows and each
// recurrent head's per-token k, row decays and delta (RollbackTarget's
// layout, batch.h).
struct RollbackLog {
  std::shared_ptr<RecurrentState> before;
  std::vector<float> values;
  int64_t start = 0;   // the sequence's length before the step
  int64_t tokens = 0;  // the run's length; 0: no step to roll back
};

// One sequence's part of a verification step (speculative decoding): its
// last sampled token, then the drafts that might follow it. The step
// writes the recurrent state after the run into a spare buffer and makes
// it the sequence's, leaving the state before it in rollback->before and
// the run's log beside it; Engine::RollBack replays the log onto it when
// drafts fail. A full accept costs no state writes beyond the step's own,
// a partial one a pass over the state. (Recurrent models need `rollback`.)
struct VerifyRun {
  Sequence* seq = nullptr;
  std::span<const int32_t> tokens;  // 1 + drafts
  RollbackLog* rollback = nullptr;
};

// One sequence's part of an MTP drafting pass: `count` drafts to follow
// `token` (its last sampled token, not yet in the sequence).
struct MtpDraftRun {
  Sequence* seq = nullptr;
  int32_t token = 0;
  int64_t count = 0;
  std::vector<int32_t>* drafts = nullptr;  // receives the drafts, greedy
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(std::shared_ptr<const model::Model> model,
                                                const EngineOptions& options);

  const model::Model& model() const { return *model_; }
  const model::ModelConfig& config() const { return model_->config; }
  const cache::KvLayout& kv_layout() const { return kv_layout_; }
  const RecurrentLayout& recurrent_layout() const { return rec_layout_; }
  ThreadPool& pool() { return *pool_; }
  // Distinct routed experts run per MoE layer pass since the engine began
  // (0 for a dense model): what a step reads of the experts' weights.
  struct ExpertCounts {
    int64_t layer_passes = 0, experts_run = 0;
  };
  ExpertCounts expert_counts() const { return {ws_.moe.layer_passes, ws_.moe.experts_run}; }

  Sequence NewSequence() const { return Sequence(kv_layout_, rec_layout_); }
  // From a snapshot (KV of n tokens + recurrent state at n).
  Result<Sequence> Admit(const cache::KvView& kv, const cache::RecurrentBlob* recurrent) const;
  // From a recurrent checkpoint at n + KV rows [0, n) of a longer snapshot.
  Result<Sequence> AdmitCheckpoint(const cache::RecurrentBlob* recurrent, int64_t n,
                                   const cache::KvView& longer) const;

  // Appends `tokens` (non-empty) to `seq`, in chunks.
  Status Prefill(Sequence& seq, std::span<const int32_t> tokens, const PrefillOptions& options,
                 PrefillResult* result);
  // One token per sequence (distinct sequences of any lengths) in one step;
  // logits becomes [seqs.size(), vocab].
  Status Decode(std::span<Sequence* const> seqs, std::span<const int32_t> tokens, std::vector<float>* logits);
  // Appends every run's tokens to its sequence in one step (distinct
  // sequences); logits becomes [sum of run lengths, vocab], the row after
  // each token. Every row is computed as a decode step of it alone would
  // compute it (Segment::rows_as_decode), so its logits equal, bit for bit,
  // those Decode would give at that position.
  Status Verify(std::span<const VerifyRun> runs, std::vector<float>* logits);
  // Back to `length` tokens of `seq` after a Verify of its run (log.start <=
  // length <= log.start + log.tokens): KV rows past it are forgotten and the
  // recurrent state becomes the state before the step with the log's first
  // length - start tokens replayed, equal bit for bit to the state the step
  // had there (log.before takes the replaced state). With nothing logged
  // (attention-only models, a run of one token) only the KV goes back.
  void RollBack(Sequence& seq, int64_t length, RollbackLog& log);
  // Drafts with the MTP block (EngineOptions::mtp): for every run, `count`
  // one-row passes of the block and the head, chained through the block's
  // own output state, all runs of a depth in one pass. Sequences end as
  // they began (the KV rows written past their end are dropped).
  Status DraftMtp(std::span<const MtpDraftRun> runs);
  bool mtp() const { return options_.mtp; }

 private:
  Engine(std::shared_ptr<const model::Model> model, const EngineOptions& options);
  Status CheckTokens(const Sequence& seq, std::span<const int32_t> tokens) const;
  // Runs one batch; logits [segments, vocab] when not null.
  void Step(const Batch& batch, float* logits);

  std::shared_ptr<const model::Model> model_;
  EngineOptions options_;
  cache::KvLayout kv_layout_;
  RecurrentLayout rec_layout_;
  std::unique_ptr<ThreadPool> pool_;
  Workspace ws_;
  std::vector<float> draft_logits_;  // DraftMtp's [runs, vocab]
};

}  // namespace lineage::engine
