#include "sim/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <queue>

#include "core/percentile.h"

namespace lineage::sim {
namespace {

// Modelled arrival times. A request sent after earlier replies had really
// ended (their end_ms, when the trace has it) arrives no sooner after their
// modelled end than it did after their real end: its client may have been
// waiting for them, and a slower modelled machine must not make it arrive
// before them. arrival = t_ms + the largest slip (modelled end - real end) of
// any request that really ended before t_ms; until every such request has
// ended in the model, the arrival is not yet known. The slip only grows and
// t_ms is sorted, so arrivals stay in trace order.
class ArrivalClock {
 public:
  // kNever while a request that really ended before `r` was sent still runs.
  int64_t Arrival(const Request& r) {
    if (!unfinished_.empty() && unfinished_.begin()->first <= r.arrival_ms) return Machine::kNever;
    while (!ended_.empty() && ended_.top().first <= r.arrival_ms) {
      slip_ms_ = std::max(slip_ms_, ended_.top().second);
      ended_.pop();
    }
    return r.arrival_ms + slip_ms_;
  }
  void Arrived(int64_t index, const Request& r) {
    if (r.end_ms >= 0) where_[index] = unfinished_.insert({r.end_ms, index});
  }
  void Ended(int64_t index, const Request& r, int64_t modelled_end_ms) {
    auto it = where_.find(index);
    if (it == where_.end()) return;
    unfinished_.erase(it->second);
    where_.erase(it);
    ended_.push({r.end_ms, modelled_end_ms - r.end_ms});
  }

 private:
  int64_t slip_ms_ = 0;
  std::multimap<int64_t, int64_t> unfinished_;  // real end -> index, of requests still running in the model
  std::map<int64_t, std::multimap<int64_t, int64_t>::iterator> where_;
  // (real end, slip), earliest real end first.
  std::priority_queue<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>, std::greater<>> ended_;
};

}  // namespace

Result<ReplayResult> Replay(const Trace& trace, const ModelShape& shape, Policy& policy,
                            const MachineOptions& machine_options) {
  auto wall_start = std::chrono::steady_clock::now();
  ReplayResult res;
  res.policy = policy.name();
  res.disk_tier = policy.has_disk_tier();
  const int64_t n = static_cast<int64_t>(trace.requests.size());
  res.restore_tokens.assign(static_cast<size_t>(n), 0);
  std::vector<double> ttft_s(static_cast<size_t>(n), 0);
  std::vector<int64_t> arrived_ms(static_cast<size_t>(n), 0);
  Machine machine(shape, machine_options);
  ArrivalClock arrivals;
  std::deque<int64_t> queue;  // arrived, waiting for admission (FIFO)
  int64_t next_arrival = 0;
  auto admit = [&](int64_t index) -> Status {
    const Request& req = trace.requests[static_cast<size_t>(index)];
    const Admission a = policy.Admit({index, &req, &machine}, machine.now_ms());
    if (a.restore_tokens < 0 || a.restore_tokens >= req.num_prompt_tokens)
      return Internal(policy.name() + ": restore point " + std::to_string(a.restore_tokens) + " outside [0, " +
                      std::to_string(req.num_prompt_tokens) + ") at request " + std::to_string(index));
    if (a.wait_for >= index)
      return Internal(policy.name() + ": request " + std::to_string(index) + " waits for request " +
                      std::to_string(a.wait_for) + ", which started after it");
    Machine::Work w;
    w.prompt_tokens = req.num_prompt_tokens;
    w.restore_tokens = a.restore_tokens;
    w.output_tokens = req.output.num_tokens;
    w.io_ms = static_cast<int64_t>(std::ceil(1000.0 * (static_cast<double>(a.disk_read_bytes) / shape.disk_read_bytes_per_s +
                                                       static_cast<double>(a.ram_copy_bytes) / shape.ram_copy_bytes_per_s)));
    w.wait_for = a.wait_for;
    w.wait_tokens = a.restore_tokens;
    machine.Start(index, w);
    res.restore_tokens[static_cast<size_t>(index)] = a.restore_tokens;
    res.cached_tokens += a.restore_tokens;
    res.prompt_tokens += req.num_prompt_tokens;
    return Status::Ok();
  };
  auto admit_queued = [&]() -> Status {
    while (!queue.empty() && !machine.full()) {
      const int64_t index = queue.front();
      queue.pop_front();
      LINEAGE_RETURN_IF_ERROR(admit(index));
    }
    return Status::Ok();
  };
  while (true) {
    const int64_t arrival_ms =
        next_arrival < n ? arrivals.Arrival(trace.requests[static_cast<size_t>(next_arrival)]) : Machine::kNever;
    // Every event of this instant is handled once the next one is later.
    if (arrival_ms > machine.now_ms()) machine.Kick();
    const int64_t machine_ms = machine.NextEventMs();
    if (machine_ms == Machine::kNever && arrival_ms == Machine::kNever) break;
    if (machine_ms <= arrival_ms) {
      const Machine::Ended ended = machine.Advance();
      const int64_t t = machine.now_ms();
      for (int64_t index : ended.prompts) {
        const Request& req = trace.requests[static_cast<size_t>(index)];
        ttft_s[static_cast<size_t>(index)] = static_cast<double>(t - arrived_ms[static_cast<size_t>(index)]) / 1000.0;
        policy.Commit({index, &req, &machine}, t);
      }
      for (int64_t index : ended.replies) {
        const Request& req = trace.requests[static_cast<size_t>(index)];
        policy.Finish({index, &req, &machine}, t);
        arrivals.Ended(index, req, t);
      }
      LINEAGE_RETURN_IF_ERROR(admit_queued());
      continue;
    }
    const Request& req = trace.requests[static_cast<size_t>(next_arrival)];
    arrived_ms[static_cast<size_t>(next_arrival)] = arrival_ms;
    arrivals.Arrived(next_arrival, req);
    machine.MoveClock(arrival_ms);
    queue.push_back(next_arrival++);
    LINEAGE_RETURN_IF_ERROR(admit_queued());
  }
  if (!queue.empty() || next_arrival < n)
    return Internal(policy.name() + ": " + std::to_string(queue.size() + static_cast<size_t>(n - next_arrival)) +
                    " requests never started");
  LINEAGE_RETURN_IF_ERROR(policy.status());
  res.requests = n;
  res.counters = policy.counters();
  res.ttft_p50_s = Percentile(ttft_s, 0.50);
  res.ttft_p95_s = Percentile(ttft_s, 0.95);
  res.ttft_mean_s = n > 0 ? std::accumulate(ttft_s.begin(), ttft_s.end(), 0.0) / static_cast<double>(n) : 0.0;
  res.ttft_s = std::move(ttft_s);
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return res;
}

Result<std::vector<ReplayResult>> ReplayPolicies(const Trace& trace, const ModelShape& shape,
                                                 const std::vector<std::string>& policies,
                                                 const PolicyOptions& options) {
  MachineOptions machine;
  machine.parallel = options.parallel;
  LINEAGE_ASSIGN_OR_RETURN(auto oracle, MakePolicy("oracle", shape, options));
  LINEAGE_ASSIGN_OR_RETURN(ReplayResult oracle_result, Replay(trace, shape, *oracle, machine));
  std::vector<ReplayResult> out;
  for (const std::string& name : policies) {
    ReplayResult r;
    if (name == "oracle") {
      r = oracle_result;
    } else {
      LINEAGE_ASSIGN_OR_RETURN(auto policy, MakePolicy(name, shape, options));
      LINEAGE_ASSIGN_OR_RETURN(r, Replay(trace, shape, *policy, machine));
    }
    r.oracle_tokens = oracle_result.cached_tokens;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace lineage::sim
