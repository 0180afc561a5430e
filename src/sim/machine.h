// Machine: the one computer every replayed request shares (docs/sim.md,
// "One machine").
//
// It runs the loop of `lineage serve`'s scheduler (server/generation/
// scheduler.h): at most `parallel` requests are admitted at once; each turn
// runs one prefill chunk of at most `chunk_tokens` tokens of one prefilling
// request (round robin) and then one decode step over every decoding request.
// A chunk of c tokens at position p takes step + c / prefill speed +
// pair x c x (p + (c - 1) / 2) (attention grows with the context); a decode
// step of n sequences takes the shape's time per token + (n - 1) x row +
// pair x the sum of their contexts (decode reads every weight once per step:
// memory-bound, so a sequence adds little). The known shapes set step, row
// and the pair costs to 0; a machine measured by lineage bench sets them
// (ModelShape). An admitted
// request may first wait until another running request has computed the
// tokens it restores from (in-flight sharing), then spends its restore I/O
// time (disk read, RAM copy: these use no compute), then prefills, then
// decodes.
//
// The replay (sim/replay.h) drives it: Start() at admission, NextEventMs()
// and Advance() for the end of a turn or of an I/O wait; Advance() reports
// the requests whose prompt or reply ended then.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "sim/policy.h"
#include "sim/shapes.h"

namespace lineage::sim {

struct MachineOptions {
  int parallel = 4;             // requests admitted at once: `lineage serve --parallel`'s default
  int64_t chunk_tokens = 256;   // prefill tokens per turn: SchedulerOptions::prefill_chunk_tokens
};

class Machine final : public Progress {
 public:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  struct Work {
    int64_t prompt_tokens = 0;    // m
    int64_t restore_tokens = 0;   // r < m: where its prefill starts
    int64_t output_tokens = 0;    // decode steps after the prompt
    int64_t io_ms = 0;            // restore I/O before anything else
    int64_t wait_for = -1;        // a running request it restores from, or -1
    int64_t wait_tokens = 0;      // ... once that request has computed this many tokens
  };
  struct Ended {
    std::vector<int64_t> replies;  // reply ends (Finish), in start order
    std::vector<int64_t> prompts;  // prompt ends (Commit), in start order
  };

  Machine(const ModelShape& shape, const MachineOptions& options);

  bool full() const { return static_cast<int>(running_.size()) >= options_.parallel; }
  // Admits `index` at now_ms().
  void Start(int64_t index, const Work& work);
  // Moves the clock to `t` (<= NextEventMs(): nothing ends on the way).
  void MoveClock(int64_t t) { now_ms_ = std::max(now_ms_, t); }
  // Starts a turn at now_ms() if none runs and some request can compute.
  // The replay calls it once every event of the current instant is handled,
  // so that requests admitted at that instant join the turn (the server's
  // loop admits before it computes).
  void Kick();
  // When the running turn or the next I/O wait ends; kNever when neither.
  int64_t NextEventMs() const;
  // Moves to NextEventMs() and ends what ends then. Requests whose reply
  // ended have left the machine.
  Ended Advance();
  int64_t now_ms() const { return now_ms_; }
  // Progress: restore + prefilled while prefilling, prompt + decoded after;
  // the restore point during its I/O, 0 while it waits; -1 when not running.
  int64_t ComputedTokens(int64_t index) const override;
  // ComputedTokens plus the prefill chunk of the turn running now.
  int64_t FrontierTokens(int64_t index) const override;

 private:
  enum class Phase { kWaiting, kIo, kPrefill, kDecode };
  struct Running {
    Work work;
    Phase phase = Phase::kWaiting;
    int64_t ready_ms = 0;    // end of I/O
    int64_t done = 0;        // prefilled (kPrefill) or decoded (kDecode) tokens
  };
  struct Turn {
    int64_t end_ms = kNever;
    int64_t prefill_index = -1;  // whose chunk runs
    int64_t chunk = 0;
    std::vector<int64_t> decoding;
  };
  void Promote();  // source reached, I/O ended: on to the next phase

  ModelShape shape_;
  MachineOptions options_;
  int64_t now_ms_ = 0;
  std::map<int64_t, Running> running_;  // by request index = start order
  int64_t last_prefill_ = -1;           // round robin over prefilling requests
  Turn turn_;
};

}  // namespace lineage::sim
