// Replay: drives one Policy over a Trace in modelled time (docs/sim.md).
//
// Discrete events per request: arrival (Admit), prompt end (Commit) at
// arrival + modelled TTFT, reply end (Finish) at prompt end + output tokens ×
// decode time. Events at one instant run Finish, Commit, then Arrival, so a
// state committed at t serves a request arriving at t, and requests arriving
// together (parallel sub-agents, a retry racing its original) all restore
// before any of them commits. Requests do not share compute: each runs as if
// it had the machine to itself. A policy with a fixed number of slots
// (llama-server) may make a request wait for one (Admission::wait_for_slot):
// it is queued in arrival order and admitted after a Finish frees a slot.
//
// Modelled TTFT = time waiting for a slot + time waited for another
// request's prefill (in-flight sharing) + disk bytes read / disk read speed
// + RAM bytes copied / RAM copy speed + uncached prompt tokens / prefill speed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  double ttft_p50_s = 0, ttft_p95_s = 0;
  double wall_s = 0;               // host time the replay took
  std::vector<int64_t> restore_tokens;  // per request
  std::vector<double> ttft_s;           // per request, modelled
  double share_of_oracle() const {
    return oracle_tokens > 0 ? static_cast<double>(cached_tokens) / static_cast<double>(oracle_tokens) : 1.0;
  }
};

// Replays `trace` through `policy`. Fails (Internal) if the policy returns a
// restore point >= the prompt length or negative: a policy bug.
Result<ReplayResult> Replay(const Trace& trace, const ModelShape& shape, Policy& policy);

// Replays every named policy; runs the oracle first to fill oracle_tokens.
Result<std::vector<ReplayResult>> ReplayPolicies(const Trace& trace, const ModelShape& shape,
                                                 const std::vector<std::string>& policies,
                                                 const PolicyOptions& options);

}  // namespace lineage::sim
