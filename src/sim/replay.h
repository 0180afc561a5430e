// Replay: drives one Policy over a Trace in modelled time (docs/sim.md).
//
// Every request runs on one Machine (sim/machine.h) shared with the others:
// it arrives (at the trace's time, held back behind replies that really
// ended before it was sent), waits in a FIFO queue while `parallel` requests
// are admitted, is admitted (Policy::Admit: its restore point), prefills in
// chunks between the other requests' chunks and decode steps, commits at its
// prompt end (Policy::Commit) and finishes at its reply end
// (Policy::Finish). Events at one instant run prompt ends, reply ends, then
// arrivals, so a state committed at t serves a request arriving at t, and
// requests arriving together (parallel sub-agents, a retry racing its
// original) all restore before any of them commits.
//
// Modelled TTFT = prompt end - arrival: queueing for admission, waiting for
// another request's prefill (in-flight sharing), restore I/O, and the prefill
// chunks, which share the machine with everything else running.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/policy.h"

namespace lineage::sim {

struct ReplayResult {
  std::string policy;
  bool disk_tier = false;          // the policy keeps a disk tier behind its RAM
  int64_t requests = 0;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t oracle_tokens = 0;       // what the oracle restored on the same trace (0 if not given)
  PolicyCounters counters;
  double ttft_p50_s = 0, ttft_p95_s = 0, ttft_mean_s = 0;
  double wall_s = 0;               // host time the replay took
  std::vector<int64_t> restore_tokens;  // per request
  std::vector<double> ttft_s;           // per request, modelled
  double share_of_oracle() const {
    return oracle_tokens > 0 ? static_cast<double>(cached_tokens) / static_cast<double>(oracle_tokens) : 1.0;
  }
};

// Replays `trace` through `policy`. Fails (Internal) if the policy returns a
// restore point >= the prompt length or negative: a policy bug.
Result<ReplayResult> Replay(const Trace& trace, const ModelShape& shape, Policy& policy,
                            const MachineOptions& machine = {});

// Replays every named policy on a machine admitting options.parallel
// requests; runs the oracle first to fill oracle_tokens.
Result<std::vector<ReplayResult>> ReplayPolicies(const Trace& trace, const ModelShape& shape,
                                                 const std::vector<std::string>& policies,
                                                 const PolicyOptions& options);

}  // namespace lineage::sim
