// Speculative decoding, one sequence's side: where drafts come from, how
// many to propose, the capture slots its verification steps reuse, and what
// was proposed and accepted. The step itself is Engine::Verify; a round is
//
//   drafts = spec.Propose(prompt, reply, limit);       // maybe none
//   run = {&seq, [last sampled token] ++ drafts, spec.slots()};
//   engine.Verify({run}, &logits);                      // 1 + k rows
//   rows = TakeVerified(drafts, logits, vocab, take);   // sample row by row
//   spec.Keep(seq, start, rows, run length);            // rewind the rest
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

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/prompt_lookup.h"
#include "engine/recurrent_state.h"
#include "engine/sequence.h"

namespace lineage::engine {

enum class SpecType {
  kNone,
  kNgram,  // prompt lookup ("ngram-simple")
};

Result<SpecType> ParseSpecType(std::string_view name);  // "none", "ngram-simple"
std::string_view SpecTypeName(SpecType type);

struct SpecOptions {
  SpecType type = SpecType::kNone;
  int64_t draft_max = 16;  // drafts per round at most
  int64_t draft_min = 1;   // fewer found: no speculation this round
  // Adapt the drafts per round to what the sequence accepts: +2 after a
  // round that took every draft, -1 after one that did not (at least
  // draft_min), so text that never repeats costs almost nothing.
  bool adaptive = true;
  PromptLookupOptions lookup;
};

class Speculator {
 public:
  explicit Speculator(const SpecOptions& options);

  const SpecOptions& options() const { return options_; }
  bool enabled() const { return options_.type != SpecType::kNone && options_.draft_max > 0; }

  // Drafts to follow prompt ++ reply (the reply ends with the token sampled
  // last, not yet in the sequence), at most `limit` (what max_tokens and the
  // context leave); empty for none.
  std::vector<int32_t> Propose(std::span<const int32_t> prompt, std::span<const int32_t> reply, int64_t limit);

  // The capture slots for Engine::Verify (VerifyRun::states).
  std::vector<std::shared_ptr<RecurrentState>>* slots() { return &slots_; }

  // After a verified run of `run_tokens` (1 + drafts) that started at
  // length `start` and whose first `rows_used` rows were sampled: keeps the
  // last token and rows_used - 1 drafts in `seq` (rewinding past them) and
  // counts the round.
  void Keep(Sequence& seq, int64_t start, int64_t rows_used, int64_t run_tokens);

  int64_t proposed() const { return proposed_; }  // drafts verified
  int64_t accepted() const { return accepted_; }  // of those, taken
  int64_t rounds() const { return rounds_; }

 private:
  SpecOptions options_;
  int64_t next_drafts_ = 0;  // the adaptive count for the next round
  std::vector<std::shared_ptr<RecurrentState>> slots_;
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
