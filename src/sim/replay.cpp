#include "sim/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>
#include <tuple>

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

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

Result<ReplayResult> Replay(const Trace& trace, const ModelShape& shape, Policy& policy) {
  auto wall_start = std::chrono::steady_clock::now();
  ReplayResult res;
  res.policy = policy.name();
  const int64_t n = static_cast<int64_t>(trace.requests.size());
  res.restore_tokens.assign(static_cast<size_t>(n), 0);
  std::vector<double> ttft_s(static_cast<size_t>(n), 0);
  // Arrivals are already sorted; commits and finishes go through a heap.
  std::priority_queue<Event, std::vector<Event>, std::greater<>> pending;
  int64_t next_arrival = 0;
  while (next_arrival < n || !pending.empty()) {
    Event ev;
    bool take_arrival = false;
    if (next_arrival < n) {
      Event a{trace.requests[next_arrival].arrival_ms, EventKind::kArrival, next_arrival};
      take_arrival = pending.empty() || !(a > pending.top());
    }
    if (take_arrival) {
      ev = {trace.requests[next_arrival].arrival_ms, EventKind::kArrival, next_arrival};
      ++next_arrival;
    } else {
      ev = pending.top();
      pending.pop();
    }
    const Request& req = trace.requests[static_cast<size_t>(ev.index)];
    RequestView view{ev.index, &req};
    switch (ev.kind) {
      case EventKind::kArrival: {
        Admission a = policy.Admit(view, ev.time_ms);
        if (a.restore_tokens < 0 || a.restore_tokens >= req.num_prompt_tokens)
          return Internal(policy.name() + ": restore point " + std::to_string(a.restore_tokens) +
                          " outside [0, " + std::to_string(req.num_prompt_tokens) + ") at request " +
                          std::to_string(ev.index));
        double t = static_cast<double>(a.disk_read_bytes) / shape.disk_read_bytes_per_s +
                   static_cast<double>(a.ram_copy_bytes) / shape.ram_copy_bytes_per_s +
                   static_cast<double>(req.num_prompt_tokens - a.restore_tokens) / shape.prefill_tokens_per_s;
        ttft_s[static_cast<size_t>(ev.index)] = t;
        res.restore_tokens[static_cast<size_t>(ev.index)] = a.restore_tokens;
        res.cached_tokens += a.restore_tokens;
        res.prompt_tokens += req.num_prompt_tokens;
        pending.push({ev.time_ms + static_cast<int64_t>(std::ceil(t * 1000.0)), EventKind::kCommit, ev.index});
        break;
      }
      case EventKind::kCommit: {
        policy.Commit(view, ev.time_ms);
        int64_t decode_ms =
            static_cast<int64_t>(std::ceil(static_cast<double>(req.output.num_tokens) * shape.decode_s_per_token * 1000));
        pending.push({ev.time_ms + decode_ms, EventKind::kFinish, ev.index});
        break;
      }
      case EventKind::kFinish:
        policy.Finish(view, ev.time_ms);
        break;
    }
  }
  LINEAGE_RETURN_IF_ERROR(policy.status());
  res.requests = n;
  res.counters = policy.counters();
  res.ttft_p50_s = Percentile(ttft_s, 0.50);
  res.ttft_p95_s = Percentile(ttft_s, 0.95);
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
