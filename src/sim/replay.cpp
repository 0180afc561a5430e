#include "sim/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <queue>
#include <tuple>

#include "core/percentile.h"

namespace lineage::sim {
namespace {

enum class EventKind : int { kFinish = 0, kCommit = 1, kArrival = 2 };

struct Event {
  int64_t time_ms;
  EventKind kind;
  int64_t index;
  bool operator>(const Event& o) const {
    return std::tie(time_ms, kind, index) > std::tie(o.time_ms, o.kind, o.index);
  }
};

int64_t DecodeMs(const Request& r, const ModelShape& shape) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(r.output.num_tokens) * shape.decode_s_per_token * 1000));
}

// Modelled arrival times. A request that really arrived after earlier ones
// had ended (their end_ms, when the trace has it) arrives no sooner after
// their modelled end than it did after their real end: its client may have
// been waiting for them, and a slower modelled machine must not make it
// arrive before them. arrival = t_ms + the largest slip (modelled end - real
// end) of any request that really ended before t_ms. The slip only grows and
// t_ms is sorted, so arrivals stay in trace order.
class ArrivalClock {
 public:
  // Earlier requests count once Admitted() (a queued one when it starts).
  int64_t Arrival(const Request& r) {
    while (!ended_.empty() && ended_.top().first <= r.arrival_ms) {
      slip_ms_ = std::max(slip_ms_, ended_.top().second);
      ended_.pop();
    }
    return r.arrival_ms + slip_ms_;
  }
  void Admitted(const Request& r, int64_t modelled_end_ms) {
    if (r.end_ms >= 0) ended_.push({r.end_ms, modelled_end_ms - r.end_ms});
  }

 private:
  int64_t slip_ms_ = 0;
  // (real end, slip), earliest real end first.
  std::priority_queue<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>, std::greater<>> ended_;
};

}  // namespace

Result<ReplayResult> Replay(const Trace& trace, const ModelShape& shape, Policy& policy) {
  auto wall_start = std::chrono::steady_clock::now();
  ReplayResult res;
  res.policy = policy.name();
  res.disk_tier = policy.has_disk_tier();
  const int64_t n = static_cast<int64_t>(trace.requests.size());
  res.restore_tokens.assign(static_cast<size_t>(n), 0);
  std::vector<double> ttft_s(static_cast<size_t>(n), 0);
  // Arrivals come in trace order (ArrivalClock keeps them sorted); commits
  // and finishes go through a heap.
  std::priority_queue<Event, std::vector<Event>, std::greater<>> pending;
  ArrivalClock arrivals;
  int64_t next_arrival = 0, next_arrival_ms = n > 0 ? arrivals.Arrival(trace.requests[0]) : 0;
  std::deque<std::pair<int64_t, int64_t>> waiting;  // (index, arrival) of queued requests
  // Admits request `index` (arrived at `arrival_ms`) at `now_ms`; false when
  // the policy has no free slot for it.
  auto admit = [&](int64_t index, int64_t arrival_ms, int64_t now_ms) -> Result<bool> {
    const Request& req = trace.requests[static_cast<size_t>(index)];
    Admission a = policy.Admit({index, &req}, now_ms);
    if (a.wait_for_slot) return false;
    if (a.restore_tokens < 0 || a.restore_tokens >= req.num_prompt_tokens)
      return Internal(policy.name() + ": restore point " + std::to_string(a.restore_tokens) + " outside [0, " +
                      std::to_string(req.num_prompt_tokens) + ") at request " + std::to_string(index));
    double t = static_cast<double>(a.wait_ms) / 1000.0 +
               static_cast<double>(a.disk_read_bytes) / shape.disk_read_bytes_per_s +
               static_cast<double>(a.ram_copy_bytes) / shape.ram_copy_bytes_per_s +
               static_cast<double>(req.num_prompt_tokens - a.restore_tokens) / shape.prefill_tokens_per_s;
    ttft_s[static_cast<size_t>(index)] = static_cast<double>(now_ms - arrival_ms) / 1000.0 + t;
    res.restore_tokens[static_cast<size_t>(index)] = a.restore_tokens;
    res.cached_tokens += a.restore_tokens;
    res.prompt_tokens += req.num_prompt_tokens;
    int64_t commit_ms = now_ms + static_cast<int64_t>(std::ceil(t * 1000.0));
    pending.push({commit_ms, EventKind::kCommit, index});
    arrivals.Admitted(req, commit_ms + DecodeMs(req, shape));
    return true;
  };
  while (next_arrival < n || !pending.empty()) {
    Event ev;
    bool take_arrival = false;
    if (next_arrival < n) {
      Event a{next_arrival_ms, EventKind::kArrival, next_arrival};
      take_arrival = pending.empty() || !(a > pending.top());
    }
    if (take_arrival) {
      ev = {next_arrival_ms, EventKind::kArrival, next_arrival};
      ++next_arrival;
    } else {
      ev = pending.top();
      pending.pop();
    }
    const Request& req = trace.requests[static_cast<size_t>(ev.index)];
    RequestView view{ev.index, &req};
    switch (ev.kind) {
      case EventKind::kArrival: {
        // Behind a queue, a request waits its turn (FIFO) without asking.
        bool admitted = false;
        if (waiting.empty()) {
          LINEAGE_ASSIGN_OR_RETURN(admitted, admit(ev.index, ev.time_ms, ev.time_ms));
        }
        if (!admitted) waiting.push_back({ev.index, ev.time_ms});
        if (next_arrival < n) next_arrival_ms = arrivals.Arrival(trace.requests[static_cast<size_t>(next_arrival)]);
        break;
      }
      case EventKind::kCommit: {
        policy.Commit(view, ev.time_ms);
        pending.push({ev.time_ms + DecodeMs(req, shape), EventKind::kFinish, ev.index});
        break;
      }
      case EventKind::kFinish: {
        policy.Finish(view, ev.time_ms);
        // A slot may have freed: the queue's head tries again.
        while (!waiting.empty()) {
          LINEAGE_ASSIGN_OR_RETURN(bool admitted, admit(waiting.front().first, waiting.front().second, ev.time_ms));
          if (!admitted) break;
          waiting.pop_front();
        }
        break;
      }
    }
  }
  if (!waiting.empty()) return Internal(policy.name() + ": " + std::to_string(waiting.size()) + " requests still wait for a slot at the end");
  LINEAGE_RETURN_IF_ERROR(policy.status());
  res.requests = n;
  res.counters = policy.counters();
  res.ttft_p50_s = Percentile(ttft_s, 0.50);
  res.ttft_p95_s = Percentile(ttft_s, 0.95);
  res.ttft_s = std::move(ttft_s);
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return res;
}

Result<std::vector<ReplayResult>> ReplayPolicies(const Trace& trace, const ModelShape& shape,
                                                 const std::vector<std::string>& policies,
                                                 const PolicyOptions& options) {
  LINEAGE_ASSIGN_OR_RETURN(auto oracle, MakePolicy("oracle", shape, options));
  LINEAGE_ASSIGN_OR_RETURN(ReplayResult oracle_result, Replay(trace, shape, *oracle));
  std::vector<ReplayResult> out;
  for (const std::string& name : policies) {
    ReplayResult r;
    if (name == "oracle") {
      r = oracle_result;
    } else {
      LINEAGE_ASSIGN_OR_RETURN(auto policy, MakePolicy(name, shape, options));
      LINEAGE_ASSIGN_OR_RETURN(r, Replay(trace, shape, *policy));
    }
    r.oracle_tokens = oracle_result.cached_tokens;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace lineage::sim
