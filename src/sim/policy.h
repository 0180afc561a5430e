// Policy: one prompt-cache behaviour driven by the replay (docs/policies.md).
//
// The replay calls, for every request, Admit when the machine admits it
// (lookup: what can be restored), Commit when its prefill ends (the state at
// the prompt end exists), and Finish when its decode ends (the state after the
// reply exists). Calls for different requests interleave in time order, so a
// policy must handle a Commit arriving after other requests were admitted
// (concurrency). RequestView::progress tells how far every running request
// has computed (sim/machine.h).
//
// Policies charge bytes with the ModelShape they were built with and keep
// their own counters. Not thread-safe: one replay drives one policy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/shapes.h"
#include "sim/trace.h"

namespace lineage::sim {

struct Admission {
  int64_t restore_tokens = 0;   // tokens not recomputed (prefix restore + reused chunks)
  int64_t disk_read_bytes = 0;  // read from disk to restore
  int64_t ram_copy_bytes = 0;   // copied in RAM to restore (whole-state clones)
  // In-flight sharing: the restore comes from running request `wait_for`
  // once it has computed `restore_tokens` tokens; the request waits for that
  // (its TTFT includes the wait). -1: it restores now.
  int64_t wait_for = -1;
};

struct PolicyCounters {
  int64_t ram_bytes = 0;        // held now
  int64_t ram_peak_bytes = 0;
  int64_t disk_bytes = 0;       // held now
  int64_t disk_written_bytes = 0;
  int64_t disk_read_bytes = 0;
  int64_t evictions = 0;        // entries or states dropped for room (RAM or disk)
};

struct PolicyOptions {
  int64_t ram_budget_bytes = 0;
  int64_t disk_budget_bytes = 0;
  int parallel = 4;             // requests admitted at once (llama-server's slots)
};

// How far the machine has computed each running request.
class Progress {
 public:
  virtual ~Progress() = default;
  // Tokens of request `index`'s prompt + reply that exist now; -1 when it
  // is not running (not yet admitted, or its reply has ended).
  virtual int64_t ComputedTokens(int64_t index) const = 0;
  // Computed, or being computed by the step running now: no capture can be
  // added below this (the server's in-flight progress); -1 when not running.
  virtual int64_t FrontierTokens(int64_t index) const { return ComputedTokens(index); }
};

// What a policy is told about the request it serves.
struct RequestView {
  int64_t index = 0;            // position in the trace
  const Request* request = nullptr;
  const Progress* progress = nullptr;  // never null under Replay
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual Admission Admit(const RequestView& r, int64_t now_ms) = 0;
  virtual void Commit(const RequestView& r, int64_t now_ms) = 0;
  virtual void Finish(const RequestView& r, int64_t now_ms) = 0;
  virtual PolicyCounters counters() const = 0;
  // True when the policy keeps a disk tier behind its RAM (tables and plots
  // mark such policies so that like is compared with like).
  virtual bool has_disk_tier() const { return false; }
  // Not ok once the policy detected a fault of its own (a restore whose
  // tokens differ from the prompt's, a failed commit); the replay reports it.
  virtual Status status() const { return Status::Ok(); }
};

// Builds a policy by name (PolicyNames()).
// What every simulated peer keeps: the model's shape, the budgets it runs
// under and the counters the replay reads. Peers derive from it and charge
// counters_ as they go; the lineage adapter, which reads its counters from
// the real cache, does not.
class PeerPolicy : public Policy {
 public:
  PolicyCounters counters() const override { return counters_; }

 protected:
  PeerPolicy(const ModelShape& shape, const PolicyOptions& options) : shape_(shape), options_(options) {}
  ModelShape shape_;
  PolicyOptions options_;
  PolicyCounters counters_;
};

Result<std::unique_ptr<Policy>> MakePolicy(const std::string& name, const ModelShape& shape,
                                           const PolicyOptions& options);
std::vector<std::string> PolicyNames();

// Counters helper: tracks the peak as RAM changes.
inline void ChargeRam(PolicyCounters& c, int64_t delta) {
  c.ram_bytes += delta;
  if (c.ram_bytes > c.ram_peak_bytes) c.ram_peak_bytes = c.ram_bytes;
}

}  // namespace lineage::sim
