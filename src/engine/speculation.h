// Speculative decoding, one sequence's side: where drafts come from, how
// many to propose, the rollback log its verification steps reuse, and what
// was proposed and accepted. The step itself is Engine::Verify; a round is
//
//   drafts = spec.Propose(prompt, reply, limit, costs);  // maybe none
//   run = spec.Run(&seq, [last sampled token] ++ drafts);
//   engine.Verify({run}, &logits);                      // 1 + k rows
//   rows = TakeVerified(drafts, logits, vocab, take);   // sample row by row
//   spec.Keep(engine, seq, start, rows, run length);    // roll back the rest
//   costs.Observe(rows in the step, sequences, seconds);  // what rows cost
//
// Row i's logits are those of the sequence after the last token and drafts
// [0, i), so sampling row i is exactly what decoding would sample there;
// the round goes on while the token taken equals the draft. With a seeded
// sampler the tokens equal those of decoding one at a time (the draft is
// deterministic: accepting it when the draw equals it is the rejection rule
// for a one-hot draft distribution, so the output keeps the target's).
//
// Thread-safety: a Speculator belongs to one sequence.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/prompt_lookup.h"
#include "engine/recurrent_state.h"
#include "engine/sequence.h"

namespace lineage::engine {

enum class SpecType {
  kNone,
  kNgram,  // prompt lookup ("ngram-simple")
  kMtp,    // the model's MTP block (Engine::DraftMtp; "draft-mtp")
};

Result<SpecType> ParseSpecType(std::string_view name);  // "none", "ngram-simple", "draft-mtp"
std::string_view SpecTypeName(SpecType type);

struct SpecOptions {
  SpecType type = SpecType::kNone;
  int64_t draft_max = 16;  // drafts per round at most
  int64_t draft_min = 1;   // fewer worth drafting: no speculation this round
  // Choose the drafts per round by expected gain (DraftCount), or always
  // draft_max when drafts exist (benchmarks that set the acceptance).
  bool adaptive = true;
  PromptLookupOptions lookup;
};

// What a step of n rows per sequence costs against a decode step, learnt
// from the steps the caller times: an average of the seconds per sequence
// for each n (1 to kLearntRows), between them the straight line, beyond the
// largest the slope of its last segment. The cost is not a straight line in
// n: the 0.8B Q4_K_M file on two cores takes 1.16, 1.28, 1.42, 1.56 decode
// steps for 2 to 5 rows, then 2.21 for 6 (the row kernels take at most 5
// tokens per pass). A sequence that always drafts never times a one-row
// step: the decode cost is then the line through its two smallest sizes
// taken back to n = 1. Until anything is timed, each row adds
// initial_row_cost. CPU decode is bound by reading the weights; each
// further row adds its multiply-adds, so whether a draft pays depends on
// the machine and the file.
class StepCosts {
 public:
  explicit StepCosts(double initial_row_cost = 0.35, double initial_draft_cost = 0.5)
      : initial_row_cost_(initial_row_cost), draft_cost_(initial_draft_cost) {}
  // A step of `rows` rows over `sequences` sequences took `seconds`.
  void Observe(int64_t rows, int64_t sequences, double seconds);
  // A step of n rows per sequence in decode steps (1 for n <= 1).
  double StepCost(int64_t rows_per_sequence) const;
  // What the first verified row adds to a decode step.
  double row_cost() const { return StepCost(2) - 1.0; }
  // An MTP drafting pass of `depth` one-row passes over `sequences`
  // sequences: draft_cost() is one draft's share beside a decode step (the
  // block, one layer, and the head: on a small model the head is most of it).
  void ObserveDrafts(int64_t depth, int64_t sequences, double seconds);
  double draft_cost() const { return draft_cost_; }

  static constexpr int64_t kLearntRows = 32;

 private:
  double DecodeSeconds() const;  // timed, or taken back from larger steps; 0 before any
  double initial_row_cost_;
  double draft_cost_;
  // Per n, an average of seconds per sequence (weight kWeight on the
  // newest); 0: never timed.
  std::array<double, kLearntRows + 1> seconds_{};
};

class Speculator {
 public:
  explicit Speculator(const SpecOptions& options);

  const SpecOptions& options() const { return options_; }
  bool enabled() const { return options_.type != SpecType::kNone && options_.draft_max > 0; }

  // How many drafts to verify next round, at most `limit` (what max_tokens
  // and the context leave) and `available` (what the source has): the k
  // that maximises expected tokens per step cost, (1 - a^(k+1)) / (1 - a)
  // over costs.StepCost(k + 1) + k per_draft (per_draft: what producing a
  // draft costs, an MTP pass's share), for this sequence's estimated
  // acceptance a; 0 when no k beats a plain decode step. A sequence that
  // stopped drafting probes with one draft every kProbeEvery rounds, or
  // rarer where a draft costs more than kProbeBudget x kProbeEvery of a
  // step, so it notices when its text starts repeating at a cost of at most
  // about kProbeBudget.
  int64_t DraftCount(int64_t available, int64_t limit, const StepCosts& costs, double per_draft = 0.0);
  // Drafts to follow prompt ++ reply (the reply ends with the token sampled
  // last, not yet in the sequence), as many as DraftCount allows; empty for
  // none. Prompt lookup only: MTP drafts come from Engine::DraftMtp, as
  // many as DraftCount(draft_max, limit, costs, draft cost) says.
  std::vector<int32_t> Propose(std::span<const int32_t> prompt, std::span<const int32_t> reply, int64_t limit,
                               const StepCosts& costs);
  // Estimated chance that the next draft is taken.
  double acceptance() const { return taken_ / (taken_ + missed_); }
  static constexpr int64_t kProbeEvery = 8;
  static constexpr double kProbeBudget = 0.05;

  // This sequence's part of a verification step of `tokens` (its last
  // sampled token, then the drafts), with the rollback log
  // (VerifyRun::rollback) this Speculator reuses round after round.
  VerifyRun Run(Sequence* seq, std::span<const int32_t> tokens) { return {seq, tokens, &log_}; }

  // After a verified run of `run_tokens` (1 + drafts) that started at
  // length `start` and whose first `rows_used` rows were sampled: keeps the
  // last token and rows_used - 1 drafts in `seq` (Engine::RollBack past
  // them) and counts the round.
  void Keep(Engine& engine, Sequence& seq, int64_t start, int64_t rows_used, int64_t run_tokens);
  // Counts a round of `drafts` verified drafts of which the first `taken`
  // were taken (Keep calls it).
  void Settle(int64_t drafts, int64_t taken);

  int64_t proposed() const { return proposed_; }  // drafts verified
  int64_t accepted() const { return accepted_; }  // of those, taken
  int64_t rounds() const { return rounds_; }

 private:
  SpecOptions options_;
  // Decayed counts of drafts taken and of rounds ended by a wrong draft:
  // acceptance a = taken / (taken + missed), the geometric estimate.
  double taken_ = 1.0, missed_ = 1.0;
  int64_t idle_rounds_ = 0;  // rounds without drafts since the last one with
  RollbackLog log_;
  int64_t proposed_ = 0, accepted_ = 0, rounds_ = 0;
};

// Walks the rows of a verified run: take(i, row i's logits) returns the
// token taken there, or -1 when the sequence ends at that row (an end token,
// a limit). Goes on while the token equals drafts[i]. Returns the rows used
// (1 .. drafts.size() + 1).
template <typename Take>
int64_t TakeVerified(std::span<const int32_t> drafts, std::span<const float> logits, int64_t vocab, Take take) {
  const int64_t k = static_cast<int64_t>(drafts.size());
  for (int64_t i = 0;; ++i) {
    const int32_t token = take(i, logits.subspan(static_cast<size_t>(i * vocab), static_cast<size_t>(vocab)));
    if (token < 0 || i == k || token != drafts[static_cast<size_t>(i)]) return i + 1;
  }
}

}  // namespace lineage::engine
