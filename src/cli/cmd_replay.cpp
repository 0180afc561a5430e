// `lineage replay`: replays a trace through prompt-cache policies on a model
// shape and prints the comparison table (docs/sim.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/file_env.h"
#include "cli/command.h"
#include "sim/policy.h"
#include "sim/replay.h"
#include "sim/replicas.h"
#include "sim/report.h"
#include "trace/trace_io.h"

namespace lineage::cli {
namespace {

struct ReplayArgs {
  std::string trace;
  std::string shape = "glm-5.3-flash";
  std::string policies = "oracle,lineage,lineage-ram,exact,mlx-vlm,llama-server,rapid-mlx,marconi,omlx,vllm,sglang";
  std::string ram, disk, plot, per_request;
  std::string replicas;  // "1,2,4": the replica table instead of the policy table
  int parallel = 4;  // the server's --parallel default (SchedulerOptions::max_live)
  double prefill_speed = 0, decode_time = 0;  // > 0: override the shape's (a measured machine)
  // A measured machine's finer costs (sim::ModelShape), 0 unless given.
  double prefill_step_time = 0, prefill_pair_time = 0, decode_row_time = 0, decode_pair_time = 0;
  bool json = false;
  bool list_shapes = false;
};

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

int Fail(const Status& st) {
  std::fprintf(stderr, "replay: %s\n", st.ToString().c_str());
  return st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kNotFound ? 2 : 1;
}

// The lineage policy on N replicas (sim/replicas.h): for each N, session-hash
// and random routing, each with a shared and a private disk tier; budgets are
// per replica.
int RunReplicas(const ReplayArgs& a, const sim::Trace& trace, const sim::ModelShape& shape,
                const sim::PolicyOptions& per_replica) {
  auto oracle = sim::MakePolicy("oracle", shape, per_replica);
  if (!oracle.ok()) return Fail(oracle.status());
  // N replicas pool N machines' throughput and admissions: one machine N
  // times as fast at prefill, admitting N x parallel (docs/sim.md).
  sim::ModelShape pooled = shape;
  sim::MachineOptions machine;
  auto pool = [&](int64_t n) {
    pooled.prefill_tokens_per_s = shape.prefill_tokens_per_s * static_cast<double>(n);
    machine.parallel = per_replica.parallel * static_cast<int>(n);
  };
  pool(1);
  Result<sim::ReplayResult> best = sim::Replay(trace, pooled, **oracle, machine);
  if (!best.ok()) return Fail(best.status());
  std::vector<sim::ReplayResult> results{*best};
  for (const std::string& item : SplitComma(a.replicas)) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 1024) return Fail(InvalidArgument("--replicas: not a count: " + item));
    for (sim::Routing routing : {sim::Routing::kSessionHash, sim::Routing::kRandom}) {
      for (bool shared : {false, true}) {
        if (n == 1 && (routing == sim::Routing::kRandom || shared)) continue;  // all four are one replica
        sim::ReplicaSetPolicy policy(shape, per_replica, {n, routing, shared, 1});
        pool(n);
        Result<sim::ReplayResult> r = sim::Replay(trace, pooled, policy, machine);
        if (!r.ok()) return Fail(r.status());
        r->oracle_tokens = best->cached_tokens;
        results.push_back(*r);
      }
    }
  }
  if (a.json) {
    std::fputs(sim::FormatJson(results).c_str(), stdout);
    return 0;
  }
  std::printf("trace %s (%zu requests), shape %s, per replica: RAM budget %s, disk budget %s\n", a.trace.c_str(),
              trace.requests.size(), shape.name.c_str(), sim::FormatBytes(per_replica.ram_budget_bytes).c_str(),
              sim::FormatBytes(per_replica.disk_budget_bytes).c_str());
  std::fputs(sim::FormatTable(results).c_str(), stdout);
  return 0;
}

// The known shapes as JSON, one object each (scripts/sim_tables writes
// docs/sim.md's shape table from it).
int ListShapes() {
  nlohmann::json out = nlohmann::json::array();
  for (const sim::ModelShape& s : sim::KnownShapes())
    out.push_back({{"name", s.name}, {"kv_bytes_per_token", s.kv_bytes_per_token}, {"recurrent_bytes", s.recurrent_bytes},
                   {"prefill_tokens_per_s", s.prefill_tokens_per_s}, {"decode_s_per_token", s.decode_s_per_token},
                   {"ram_budget_bytes", s.ram_budget_bytes}, {"disk_budget_bytes", s.disk_budget_bytes},
                   {"disk_read_bytes_per_s", s.disk_read_bytes_per_s}, {"disk_write_bytes_per_s", s.disk_write_bytes_per_s},
                   {"ram_copy_bytes_per_s", s.ram_copy_bytes_per_s}});
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}

int RunReplay(const ReplayArgs& a) {
  if (a.list_shapes) return ListShapes();
  if (a.trace.empty()) return Fail(InvalidArgument("a trace file is required"));
  Result<sim::ModelShape> shape = sim::FindShape(a.shape);
  if (!shape.ok()) return Fail(shape.status());
  if (a.prefill_speed < 0 || a.decode_time < 0) return Fail(InvalidArgument("--prefill-speed and --decode-time must be positive"));
  if (a.prefill_speed > 0) shape->prefill_tokens_per_s = a.prefill_speed;
  if (a.decode_time > 0) shape->decode_s_per_token = a.decode_time;
  for (const auto& [value, name] : {std::pair{a.prefill_step_time, "--prefill-step-time"}, {a.prefill_pair_time, "--prefill-pair-time"},
                                    {a.decode_row_time, "--decode-row-time"}, {a.decode_pair_time, "--decode-pair-time"}})
    if (!(value >= 0) || !std::isfinite(value)) return Fail(InvalidArgument(std::string(name) + " must be 0 or more"));
  shape->prefill_step_s = a.prefill_step_time;
  shape->prefill_pair_s = a.prefill_pair_time;
  shape->decode_row_s = a.decode_row_time;
  shape->decode_pair_s = a.decode_pair_time;
  sim::PolicyOptions options{shape->ram_budget_bytes, shape->disk_budget_bytes, std::max(1, a.parallel)};
  if (!a.ram.empty()) {
    Result<int64_t> b = sim::ParseBytes(a.ram);
    if (!b.ok()) return Fail(b.status());
    options.ram_budget_bytes = *b;
  }
  if (!a.disk.empty()) {
    Result<int64_t> b = sim::ParseBytes(a.disk);
    if (!b.ok()) return Fail(b.status());
    options.disk_budget_bytes = *b;
  }
  std::vector<std::string> policies = SplitComma(a.policies);
  for (const std::string& p : policies) {
    auto probe = sim::MakePolicy(p, *shape, options);
    if (!probe.ok()) return Fail(probe.status());
  }
  Result<sim::Trace> trace = sim::ReadTrace(a.trace);
  if (!trace.ok()) return Fail(trace.status());
  if (!a.replicas.empty()) return RunReplicas(a, *trace, *shape, options);
  auto results = sim::ReplayPolicies(*trace, *shape, policies, options);
  if (!results.ok()) return Fail(results.status());
  if (!a.per_request.empty()) {
    std::string csv = "index,t_ms,session,prompt_tokens";
    for (const sim::ReplayResult& r : *results) csv += "," + r.policy;
    for (const sim::ReplayResult& r : *results) csv += "," + r.policy + " ttft_s";
    csv += "\n";
    for (size_t i = 0; i < trace->requests.size(); ++i) {
      const sim::Request& q = trace->requests[i];
      csv += std::to_string(i) + "," + std::to_string(q.arrival_ms) + "," + trace->sessions[q.session] + "," +
             std::to_string(q.num_prompt_tokens);
      for (const sim::ReplayResult& r : *results) csv += "," + std::to_string(r.restore_tokens[i]);
      for (const sim::ReplayResult& r : *results) csv += "," + std::to_string(r.ttft_s[i]);
      csv += "\n";
    }
    Status st = WriteFileAtomic(a.per_request, csv);
    if (!st.ok()) return Fail(st);
  }
  if (a.json) {
    std::fputs(sim::FormatJson(*results).c_str(), stdout);
  } else {
    std::printf("trace %s (%zu requests), shape %s, RAM budget %s, disk budget %s, %d admitted at once\n",
                a.trace.c_str(), trace->requests.size(), shape->name.c_str(),
                sim::FormatBytes(options.ram_budget_bytes).c_str(), sim::FormatBytes(options.disk_budget_bytes).c_str(),
                options.parallel);
    std::fputs(sim::FormatTable(*results).c_str(), stdout);
  }
  if (!a.plot.empty()) {
    std::vector<sim::SweepPoint> points;
    std::vector<std::string> swept;
    for (const std::string& p : policies)
      if (p != "oracle") swept.push_back(p);
    for (int64_t budget : sim::SweepBudgets(options.ram_budget_bytes)) {
      sim::PolicyOptions o = options;
      o.ram_budget_bytes = budget;
      auto r = sim::ReplayPolicies(*trace, *shape, swept, o);
      if (!r.ok()) return Fail(r.status());
      // Policies with a disk tier are named "+disk" in the plot's key.
      for (const sim::ReplayResult& x : *r)
        points.push_back({x.disk_tier ? x.policy + "+disk" : x.policy, budget, x.share_of_oracle()});
    }
    Status st = sim::PlotSweep(points, a.trace + " on " + shape->name, a.plot);
    if (!st.ok()) return Fail(st);
    std::fprintf(stderr, "plot written to %s\n", a.plot.c_str());
  }
  return 0;
}

Register reg{{"replay", "Replay a trace through prompt-cache policies on a model shape", [](CLI::App& sub) {
                auto args = std::make_shared<ReplayArgs>();
                std::string policies, shapes;
                for (const std::string& n : sim::PolicyNames()) policies += (policies.empty() ? "" : ", ") + n;
                for (const sim::ModelShape& s : sim::KnownShapes()) shapes += (shapes.empty() ? "" : ", ") + s.name;
                sub.add_option("trace", args->trace, "trace file (native JSONL or Mooncake)");
                sub.add_flag("--list-shapes", args->list_shapes, "print the known shapes as JSON and exit");
                sub.add_option("--shape", args->shape, "model shape: " + shapes)->capture_default_str();
                sub.add_option("--policy", args->policies, "comma-separated policies: " + policies)
                    ->capture_default_str();
                sub.add_option("--ram", args->ram, "RAM budget, e.g. 48G (default: the shape's)");
                sub.add_option("--disk", args->disk, "disk budget, e.g. 1T (default: the shape's)");
                sub.add_option("--plot", args->plot, "also sweep RAM budgets 1/16..2x and plot (.png or .svg)");
                sub.add_option("--per-request", args->per_request,
                               "also write each request's restored tokens per policy as CSV");
                sub.add_option("--prefill-speed", args->prefill_speed,
                               "prefill tokens per second, in place of the shape's (a machine measured with lineage bench)");
                sub.add_option("--decode-time", args->decode_time, "seconds per decode step, in place of the shape's");
                sub.add_option("--prefill-step-time", args->prefill_step_time, "seconds of fixed cost per prefill step");
                sub.add_option("--prefill-pair-time", args->prefill_pair_time,
                               "prefill seconds per prompt token per context token before it (attention)");
                sub.add_option("--decode-row-time", args->decode_row_time,
                               "seconds each sequence adds to a decode step after the first");
                sub.add_option("--decode-pair-time", args->decode_pair_time,
                               "decode seconds per sequence per context token (attention)");
                sub.add_option("--parallel", args->parallel,
                               "requests admitted at once, for every policy (lineage serve --parallel)")
                    ->capture_default_str();
                sub.add_flag("--json", args->json, "print JSON instead of the table");
                sub.add_option("--replicas", args->replicas,
                               "comma-separated replica counts, e.g. 1,2,4: the lineage policy on N replicas with "
                               "session-hash and random routing, shared and private disk (budgets per replica)");
                return std::function<int()>([args] { return RunReplay(*args); });
              }}};

}  // namespace
}  // namespace lineage::cli
